//! `/metrics` state and the self-test mark, in the key-value store so they hold across the
//! per-request instances and concurrent requests.
//!
//! Keys live under `model/<name>/<start>/`, where `<start>` identifies this deployment: the
//! `deployment_started_at_ms` variable the native host sets at start-up or, where no host sets
//! it (Spin), the time the model first answered. A restarted deployment starts fresh
//! counters, so `requests_served` and `uptime_s` always describe the same run.
//!
//! The counters restart with every deployment, so they need no durable write: they are kept
//! in the `deployment` store where the host grants one (`runtime-host` keeps it in memory,
//! shared by every instance of the deployment; measured, the two durable SQLite commits per
//! prediction were the largest cost of molprop's request after the model itself) and in
//! `default` where it does not (Spin, unless its runtime configuration names the label).
//!
//! On a host that reuses instances (`runtime-host`), an instance opens this state once and
//! keeps it: the deployment's key prefix and start time are the same for every request, and
//! so is a passed self-test. Counters themselves are always read from the store, which other
//! instances update too.

use edge_api::model::{DEPLOYMENT_STORE, Metrics};
use guest_kit::kv::{Change, Store};
use guest_kit::{ApiError, config};
use std::cell::Cell;
use std::rc::Rc;
use std::time::{SystemTime, UNIX_EPOCH};

thread_local! {
    /// This instance's deployment state, opened by its first request.
    static OPENED: std::cell::RefCell<Option<Rc<DeploymentState>>> = const { std::cell::RefCell::new(None) };
}

/// The counter of the sampled predictions' latency, in microseconds.
const SAMPLED_LATENCY: &str = "latency_us_sampled";
/// Every prediction's latency is sampled up to this many; then one in this many.
const SAMPLE_EVERY: u64 = 16;

/// The predictions that the sampled ones among 1..=`n` stand for: each of the first 16 for
/// itself, each later sampled one (32, 48, ...) for the 16 up to it. A mean weighted so
/// counts every stretch of the deployment's life alike, not its first predictions (a cold
/// instance, a graph loaded on first use) sixteen times over.
fn weight_up_to(n: u64) -> u64 {
    n.min(SAMPLE_EVERY) + SAMPLE_EVERY * (n / SAMPLE_EVERY).saturating_sub(1)
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

pub struct DeploymentState {
    store: Store,
    model: String,
    prefix: String,
    started_ms: u64,
    /// Set once the self-test has passed: it stays passed for this deployment.
    self_test_passed: Cell<bool>,
}

impl DeploymentState {
    /// The state of `model`'s deployment, opened once per instance.
    pub fn current(model: &str) -> Result<Rc<Self>, ApiError> {
        if let Some(state) = OPENED.with_borrow(|o| o.clone())
            && state.model == model
        {
            return Ok(state);
        }
        let state = Rc::new(Self::open(model)?);
        OPENED.set(Some(state.clone()));
        Ok(state)
    }

    fn open(model: &str) -> Result<Self, ApiError> {
        let store = Store::open(DEPLOYMENT_STORE).or_else(|_| Store::open_default())?;
        // An undefined variable is an error on some hosts and `None` on others: both mean
        // "not set" here.
        let from_host = config::variable("deployment_started_at_ms")
            .ok()
            .flatten()
            .and_then(|v| v.parse::<u64>().ok());
        let started_ms = match from_host {
            Some(ms) => ms,
            None => {
                // Read first: under Spin every request opens this state, and a read is all
                // it takes once the time is stored (an update may hold a lock, a write).
                let key = format!("model/{model}/first_seen_ms");
                match store.get_json(&key)? {
                    Some(t) => t,
                    None => {
                        let now = now_ms();
                        store.update(&key, |current: Option<u64>| {
                            Ok(match current {
                                Some(t) => (Change::Keep, t),
                                None => (Change::Put(now), now),
                            })
                        })?
                    }
                }
            }
        };
        Ok(Self {
            store,
            model: model.to_owned(),
            prefix: format!("model/{model}/{started_ms}/"),
            started_ms,
            self_test_passed: Cell::new(false),
        })
    }

    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Counts the predictions of one request that reached the model (1, or the items of a
    /// batch: `requests_served` counts predictions), with its time and error if any.
    ///
    /// One write per request: the count. The latency is added for the first 16 predictions,
    /// then for one in 16 ([`weight_up_to`]: each weighted by the predictions it stands for),
    /// each at the request's time per item, so `avg_latency_ms` is their weighted mean. Under Spin every write to its SQLite store is
    /// a commit, and a second counter per request halved `/predict`'s rate there.
    pub fn record(&self, items: u64, elapsed_us: u64, error: Option<&str>) -> Result<(), ApiError> {
        let served = self
            .store
            .increment(&self.key("requests_served"), items as i64)?
            .max(0) as u64;
        let weight = weight_up_to(served) - weight_up_to(served.saturating_sub(items));
        if weight > 0 {
            let per_item = elapsed_us / items.max(1);
            self.store
                .increment(&self.key(SAMPLED_LATENCY), (per_item * weight) as i64)?;
        }
        if let Some(e) = error {
            self.store.set_json(&self.key("last_error"), &e)?;
        }
        Ok(())
    }

    pub fn snapshot(&self) -> Result<Metrics, ApiError> {
        let served = self
            .store
            .increment(&self.key("requests_served"), 0)?
            .max(0) as u64;
        let sampled_us = self.store.increment(&self.key(SAMPLED_LATENCY), 0)?.max(0) as u64;
        let last_error: Option<String> = self.store.get_json(&self.key("last_error"))?;
        let uptime_ms = now_ms().saturating_sub(self.started_ms);
        Ok(Metrics {
            uptime_s: uptime_ms as f64 / 1000.0,
            requests_served: served,
            avg_latency_ms: match weight_up_to(served) {
                0 => 0.0,
                n => sampled_us as f64 / n as f64 / 1000.0,
            },
            last_error,
        })
    }

    pub fn self_test_passed(&self) -> Result<bool, ApiError> {
        if !self.self_test_passed.get() && self.store.exists(&self.key("self_test_passed"))? {
            self.self_test_passed.set(true);
        }
        Ok(self.self_test_passed.get())
    }

    pub fn mark_self_test_passed(&self) -> Result<(), ApiError> {
        self.store.set_json(&self.key("self_test_passed"), &true)?;
        self.self_test_passed.set(true);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::weight_up_to;

    #[test]
    fn the_first_sixteen_then_one_in_sixteen_are_sampled_each_for_what_it_stands_for() {
        assert_eq!(weight_up_to(0), 0);
        assert_eq!(weight_up_to(5), 5);
        assert_eq!(weight_up_to(16), 16);
        assert_eq!(weight_up_to(31), 16);
        assert_eq!(weight_up_to(32), 32);
        assert_eq!(weight_up_to(160), 160);
        // Exactly one prediction of every 16 after the first 16 is sampled, for 16.
        let sampled: Vec<u64> = (1..=1600u64)
            .map(|n| weight_up_to(n) - weight_up_to(n - 1))
            .filter(|&w| w > 0)
            .collect();
        assert_eq!(sampled.len(), 16 + 99);
        assert!(sampled[16..].iter().all(|&w| w == 16));
        // The weights cover the predictions to within the last, unsampled stretch.
        for n in 1..=1600u64 {
            assert!(n - weight_up_to(n) < 16, "{n}");
        }
    }
}
