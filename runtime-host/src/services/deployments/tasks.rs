//! Where every model deployment's task goes and what stops it: the stack's stop of every
//! model, or the deployment's own (a model removed from a watched directory or undeployed
//! through the admin API). Deployments started at start-up and later share one
//! [`DeploymentTasks`], so the stack awaits them all when it stops.

use anyhow::Result;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

/// The model deployments' tasks and the stack's stop of every model; cloned by whatever
/// starts deployments.
#[derive(Clone)]
pub struct DeploymentTasks {
    tasks: Arc<Mutex<Vec<JoinHandle<Result<()>>>>>,
    stop_all: watch::Receiver<bool>,
}

impl DeploymentTasks {
    /// Tasks stopped once `stop_all` says stop.
    pub fn new(stop_all: watch::Receiver<bool>) -> Self {
        Self {
            tasks: Arc::default(),
            stop_all,
        }
    }

    /// Keeps `task`, for the stack to await when it stops.
    pub fn push(&self, task: JoinHandle<Result<()>>) {
        self.tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(task);
    }

    /// The tasks kept so far, taken: the stack awaits them, then takes again until none is
    /// left (a deployment added while stopping is stopped by the same signal).
    pub fn take(&self) -> Vec<JoinHandle<Result<()>>> {
        std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// A deployment's own stop: the sender stops it alone, and the future resolves on that
    /// or when the stack stops every model. A dropped sender is no stop (a deployment
    /// nobody manages stops with the stack).
    pub fn own_stop(&self) -> (oneshot::Sender<()>, impl Future<Output = ()> + Send + use<>) {
        let (own, stopped) = oneshot::channel();
        let mut all = self.stop_all.clone();
        let stop = async move {
            let own = async {
                if stopped.await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                _ = all.wait_for(|stop| *stop) => {}
                _ = own => {}
            }
        };
        (own, stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const SOON: Duration = Duration::from_millis(200);

    #[tokio::test]
    async fn a_deployment_stops_on_its_own_stop_or_every_model_s() {
        let (stop_all, rx) = watch::channel(false);
        let tasks = DeploymentTasks::new(rx);
        let (own, stop) = tasks.own_stop();
        own.send(()).unwrap();
        assert!(
            tokio::time::timeout(SOON, stop).await.is_ok(),
            "its own stop"
        );

        let (_own, stop) = tasks.own_stop();
        stop_all.send_replace(true);
        assert!(
            tokio::time::timeout(SOON, stop).await.is_ok(),
            "every model's"
        );
    }

    #[tokio::test]
    async fn a_dropped_sender_is_no_stop() {
        let (_stop_all, rx) = watch::channel(false);
        let (own, stop) = DeploymentTasks::new(rx).own_stop();
        drop(own);
        assert!(tokio::time::timeout(SOON, stop).await.is_err());
    }
}
