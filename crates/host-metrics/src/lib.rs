//! Layer 2, the host's Prometheus metrics: what it serves, how its instance pools, stores and
//! embedding engines behave, and the registry's registrations, in the Prometheus text format
//! (OpenMetrics 1.0, written by the `prometheus-client` crate). Counters only: serving them
//! over HTTP is a service of its own (runtime-host's `services::metrics_endpoint`).
//!
//! The specification's `/metrics` of each model stays the model's own JSON; these are the
//! host's, served on the app port of `up` at `/metrics` and, for `serve`, `model` and
//! `registry`, on their own listener (`--metrics-listen`), so they can never collide with a
//! component's routes.
//!
//! The metrics are process-wide, as Prometheus clients usually keep them ([`global`]):
//! every deployment of a process reports under its `deployment` label. Label values are
//! bounded: routes are the templates of the interfaces' route tables ([`routes`]), error
//! codes the specification's, statuses HTTP's.
//!
//! Hot-path cost: one counter and one histogram update per request (a read lock and atomic
//! adds); values that are costly to keep current (instance pools, predictions counted by the
//! models themselves, the registry's size) are read when Prometheus scrapes.

mod deployment;
mod generation;
mod outbound;
mod pool;
pub mod routes;
pub mod store;

pub use deployment::Deployment;
pub use generation::Generation;
pub use pool::PoolFigures;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use std::fmt::Write;
use std::sync::{Arc, OnceLock};

/// A shared label value (a deployment's or a model's name), cloned without allocating.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct Name(pub Arc<str>);

impl EncodeLabelValue for Name {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        encoder.write_str(&self.0)
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub deployment: Name,
    pub route: &'static str,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub deployment: Name,
    pub route: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    pub deployment: Name,
    pub code: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FailedPredictionLabels {
    pub model: Name,
    pub code: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DeploymentLabels {
    pub deployment: Name,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StoreLabels {
    pub backend: &'static str,
    pub operation: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ModelLabels {
    pub model: Name,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

/// Every metric the host keeps.
pub struct HostMetrics {
    registry: Registry,
    pub requests: Family<RequestLabels, Counter>,
    pub request_duration: HistogramFamily<RouteLabels>,
    pub errors: Family<ErrorLabels, Counter>,
    pub predictions: Family<DeploymentLabels, Counter>,
    pub failed_predictions: Family<FailedPredictionLabels, Counter>,
    pub instances_live: Family<DeploymentLabels, Gauge>,
    pub instances_idle: Family<DeploymentLabels, Gauge>,
    pub instance_waiters: Family<DeploymentLabels, Gauge>,
    pub instances_created: Family<DeploymentLabels, Counter>,
    pub instance_reuses: Family<DeploymentLabels, Counter>,
    pub baseline_code: Family<DeploymentLabels, Gauge>,
    pub store_duration: HistogramFamily<StoreLabels>,
    pub store_failures: Family<StoreLabels, Counter>,
    pub embedding_batch_texts: HistogramFamily<ModelLabels>,
    pub embedding_queue: Family<ModelLabels, Gauge>,
    pub registry_active: Gauge,
    pub registry_reaped: Counter,
    pub outbound_denied: Family<DeploymentLabels, Counter>,
}

fn request_seconds() -> Histogram {
    // 0.25 ms to 30 s: a health check to a request at the default deadline.
    Histogram::new([
        0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
        10.0, 30.0,
    ])
}

fn store_seconds() -> Histogram {
    // 10 µs (a SQLite read from the page cache) to 1 s (a Redis that is going away).
    Histogram::new([
        0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01,
        0.025, 0.1, 1.0,
    ])
}

fn batch_texts() -> Histogram {
    Histogram::new([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0])
}

impl HostMetrics {
    fn new() -> Self {
        let mut m = Self {
            registry: Registry::with_prefix("runtime_host"),
            requests: Family::default(),
            request_duration: Family::new_with_constructor(request_seconds),
            errors: Family::default(),
            predictions: Family::default(),
            failed_predictions: Family::default(),
            instances_live: Family::default(),
            instances_idle: Family::default(),
            instance_waiters: Family::default(),
            instances_created: Family::default(),
            instance_reuses: Family::default(),
            baseline_code: Family::default(),
            store_duration: Family::new_with_constructor(store_seconds),
            store_failures: Family::default(),
            embedding_batch_texts: Family::new_with_constructor(batch_texts),
            embedding_queue: Family::default(),
            registry_active: Gauge::default(),
            registry_reaped: Counter::default(),
            outbound_denied: Family::default(),
        };
        let r = &mut m.registry;
        r.register(
            "http_requests",
            "HTTP requests answered, by deployment, route template and status",
            m.requests.clone(),
        );
        r.register_with_unit(
            "http_request_duration",
            "Time from a request's arrival to its answer's head, by deployment and route",
            Unit::Seconds,
            m.request_duration.clone(),
        );
        r.register(
            "errors",
            "Error answers by deployment and the specification's error_code",
            m.errors.clone(),
        );
        r.register(
            "predictions",
            "Predictions made (items: a batch of n counts n), as the model's own /metrics counts them",
            m.predictions.clone(),
        );
        r.register(
            "failed_predictions",
            "/predict answers that made no prediction, by model and error code: 4xx and 5xx \
             answers by their error_code, a 200 with success false as prediction_failed",
            m.failed_predictions.clone(),
        );
        r.register(
            "instances_live",
            "Component instances alive (serving or idle)",
            m.instances_live.clone(),
        );
        r.register(
            "instances_idle",
            "Component instances idle, ready for the next request",
            m.instances_idle.clone(),
        );
        r.register(
            "instance_waiters",
            "Requests waiting for an instance (only with --max-instances)",
            m.instance_waiters.clone(),
        );
        r.register(
            "instances_created",
            "Instances created (a request found none idle)",
            m.instances_created.clone(),
        );
        r.register(
            "instance_reuses",
            "Requests served by an instance that had served before",
            m.instance_reuses.clone(),
        );
        r.register(
            "baseline_code",
            "1 while a deployment's new instances come from Winch's baseline code (its optimized \
             code still compiling), else 0",
            m.baseline_code.clone(),
        );
        r.register_with_unit(
            "keyvalue_operation_duration",
            "Key-value store calls by backend and operation",
            Unit::Seconds,
            m.store_duration.clone(),
        );
        r.register(
            "keyvalue_failures",
            "Key-value store calls that failed, by backend and operation",
            m.store_failures.clone(),
        );
        r.register(
            "embedding_batch_texts",
            "Texts the embedding engine ran together in one pass",
            m.embedding_batch_texts.clone(),
        );
        r.register(
            "embedding_queue_requests",
            "Requests waiting on or being served by the embedding engine",
            m.embedding_queue.clone(),
        );
        r.register(
            "registry_active_registrations",
            "Registrations the registry holds, as its process monitor last saw them",
            m.registry_active.clone(),
        );
        r.register(
            "registry_reaped_processes",
            "Registrations removed because their process had died",
            m.registry_reaped.clone(),
        );
        let what = "Outgoing HTTP requests refused to a component (capabilities::outbound)";
        r.register("outbound_denied", what, m.outbound_denied.clone());
        generation::register(r);
        m
    }

    /// The text Prometheus scrapes.
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(16 * 1024);
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// The process's metrics.
pub fn global() -> &'static HostMetrics {
    static METRICS: OnceLock<HostMetrics> = OnceLock::new();
    METRICS.get_or_init(HostMetrics::new)
}

/// The embedding engine of `model`: its batches and queue.
#[derive(Clone, Debug)]
pub struct Embedding {
    labels: ModelLabels,
}

impl Embedding {
    pub fn new(model: &str) -> Self {
        Self {
            labels: ModelLabels {
                model: Name(Arc::from(model)),
            },
        }
    }

    pub fn batch(&self, texts: usize) {
        global()
            .embedding_batch_texts
            .get_or_create(&self.labels)
            .observe(texts as f64);
    }

    pub fn queue(&self, requests: usize) {
        global()
            .embedding_queue
            .get_or_create(&self.labels)
            .set(requests as i64);
    }
}
