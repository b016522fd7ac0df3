//! What the stack has started so far, so that a stop at any moment (Ctrl-C during start-up as
//! much as after "stack ready") stops exactly that, in order: the models first (each
//! unregisters while the registry still runs), then the registry, chat and the app port.

use crate::services::deployments::tasks::DeploymentTasks;
use anyhow::Result;
use std::future::Future;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A future that resolves once `tx` says stop.
fn stopper(tx: &watch::Sender<bool>) -> impl Future<Output = ()> + use<> {
    let mut rx = tx.subscribe();
    async move {
        let _ = rx.wait_for(|stop| *stop).await;
    }
}

pub struct RunningStack {
    stop_models: watch::Sender<bool>,
    stop_services: watch::Sender<bool>,
    /// Model deployments: added to after start-up too (a watched `--models`, the admin API).
    models: DeploymentTasks,
    services: Vec<JoinHandle<Result<()>>>,
}

impl RunningStack {
    pub fn new() -> Self {
        let stop_models = watch::channel(false).0;
        Self {
            models: DeploymentTasks::new(stop_models.subscribe()),
            stop_models,
            stop_services: watch::channel(false).0,
            services: Vec::new(),
        }
    }

    /// What a future waits on to stop with the models (the directory watcher).
    pub fn model_stopper(&self) -> impl Future<Output = ()> + use<> {
        stopper(&self.stop_models)
    }

    /// The model deployments' tasks, shared with whatever deploys models.
    pub fn model_tasks(&self) -> &DeploymentTasks {
        &self.models
    }

    /// What a service (registry, chat, app port) waits on to stop.
    pub fn service_stopper(&self) -> impl Future<Output = ()> + use<> {
        stopper(&self.stop_services)
    }

    pub fn service(&mut self, task: JoinHandle<Result<()>>) {
        self.services.push(task);
    }

    /// Stops everything started, in order, and waits for it.
    pub async fn stop(self) {
        self.stop_models.send_replace(true);
        // Deployments added while stopping are stopped by the same signal: take until none.
        loop {
            let tasks = self.models.take();
            if tasks.is_empty() {
                break;
            }
            for t in tasks {
                let _ = t.await;
            }
        }
        self.stop_services.send_replace(true);
        for t in self.services {
            let _ = t.await;
        }
        tracing::info!("stack stopped");
    }
}
