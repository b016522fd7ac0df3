//! One deployment's view of the metrics ([`Deployment`]): its requests counted under its
//! label as they are answered (failed predictions apart), its instance pool and its model's
//! prediction count read at scrape time, its series removed when it is undeployed.

use crate::routes;
use crate::{
    DeploymentLabels, ErrorLabels, FailedPredictionLabels, Name, PoolFigures, RequestLabels,
    RouteLabels, global,
};
use prometheus_client::metrics::counter::Counter;
use std::sync::Arc;
use std::time::Duration;

/// One deployment's view of the metrics: the label it reports under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deployment {
    name: Name,
}

impl Deployment {
    pub fn new(name: &str) -> Self {
        Self {
            name: Name(Arc::from(name)),
        }
    }

    pub(crate) fn labels(&self) -> DeploymentLabels {
        DeploymentLabels {
            deployment: self.name.clone(),
        }
    }

    /// Counts one answered request: its route (a template, see [`routes::template`]),
    /// status, time, and `error_code` when the answer names one (an error answer, or a
    /// failed prediction's 200).
    pub fn request(
        &self,
        route: &'static str,
        status: u16,
        took: Duration,
        error_code: Option<&str>,
    ) {
        let m = global();
        m.requests
            .get_or_create(&RequestLabels {
                deployment: self.name.clone(),
                route,
                status,
            })
            .inc();
        m.request_duration
            .get_or_create(&RouteLabels {
                deployment: self.name.clone(),
                route,
            })
            .observe(took.as_secs_f64());
        if status >= 400 {
            let code = routes::error_code(error_code, status);
            m.errors
                .get_or_create(&ErrorLabels {
                    deployment: self.name.clone(),
                    code,
                })
                .inc();
        }
        if route == routes::PREDICT
            && let Some(code) = routes::failed_prediction(error_code, status)
        {
            m.failed_predictions
                .get_or_create(&FailedPredictionLabels {
                    model: self.name.clone(),
                    code,
                })
                .inc();
        }
    }

    /// The instance pool as it is now (read at scrape time).
    pub fn pool(&self, stats: &PoolFigures) {
        let PoolFigures {
            live,
            idle,
            waiting,
            created,
            reused,
            baseline,
        } = *stats;
        let m = global();
        let labels = self.labels();
        m.baseline_code
            .get_or_create(&labels)
            .set(i64::from(baseline));
        m.instances_live.get_or_create(&labels).set(live);
        m.instances_idle.get_or_create(&labels).set(idle);
        m.instance_waiters.get_or_create(&labels).set(waiting);
        raise_to(&m.instances_created.get_or_create(&labels), created);
        raise_to(&m.instance_reuses.get_or_create(&labels), reused);
    }

    /// The predictions the model's own `/metrics` reports (read at scrape time). A count
    /// lower than the last one (the model's store was reset) is a counter reset.
    pub fn predictions(&self, served: u64) {
        let counter = global().predictions.get_or_create(&self.labels()).clone();
        raise_to(&counter, served);
    }

    /// Removes this deployment's series (it was undeployed).
    pub fn forget(&self) {
        let m = global();
        let labels = self.labels();
        for family in [
            &m.instances_live,
            &m.instances_idle,
            &m.instance_waiters,
            &m.baseline_code,
        ] {
            family.remove(&labels);
        }
        for family in [&m.instances_created, &m.instance_reuses, &m.predictions] {
            family.remove(&labels);
        }
    }
}

/// Moves a counter kept elsewhere (a pool's, a model's) up to `total`.
fn raise_to(counter: &Counter, total: u64) {
    let now = counter.get();
    if total > now {
        counter.inc_by(total - now);
    }
}
