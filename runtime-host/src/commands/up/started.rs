//! What `up` has started so far, so that a stop at any moment (Ctrl-C during start-up as much
//! as after "stack ready") stops exactly that, in order: the models first (each unregisters
//! while the registry still runs), then the registry, chat and the app port.

use anyhow::Result;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

/// Model deployment tasks: `up` adds to them after start-up too (a watched `--models`).
pub type ModelTasks = Arc<Mutex<Vec<JoinHandle<Result<()>>>>>;

pub struct Started {
    stop_models: watch::Sender<bool>,
    stop_services: watch::Sender<bool>,
    models: ModelTasks,
    services: Vec<JoinHandle<Result<()>>>,
}

/// A future that resolves once `rx` says stop.
fn stopper(rx: &watch::Receiver<bool>) -> impl Future<Output = ()> + use<> {
    let mut rx = rx.clone();
    async move {
        let _ = rx.wait_for(|stop| *stop).await;
    }
}

impl Started {
    pub fn new() -> Self {
        Self {
            stop_models: watch::channel(false).0,
            stop_services: watch::channel(false).0,
            models: ModelTasks::default(),
            services: Vec::new(),
        }
    }

    /// What a model deployment waits on to stop.
    pub fn model_stopper(&self) -> impl Future<Output = ()> + use<> {
        stopper(&self.stop_models.subscribe())
    }

    /// `up`'s stop of every model, to combine with a deployment's own.
    pub fn model_stop_signal(&self) -> watch::Receiver<bool> {
        self.stop_models.subscribe()
    }

    /// The model tasks, shared with whatever deploys models later.
    pub fn model_tasks(&self) -> ModelTasks {
        self.models.clone()
    }

    /// What a service (registry, chat, app port) waits on to stop.
    pub fn service_stopper(&self) -> impl Future<Output = ()> + use<> {
        stopper(&self.stop_services.subscribe())
    }

    pub fn model(&mut self, task: JoinHandle<Result<()>>) {
        self.models
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(task);
    }

    pub fn service(&mut self, task: JoinHandle<Result<()>>) {
        self.services.push(task);
    }

    /// Stops everything started, in order, and waits for it.
    pub async fn stop(self) {
        self.stop_models.send_replace(true);
        // Deployments added while stopping are stopped by the same signal: take until none.
        loop {
            let tasks = std::mem::take(&mut *self.models.lock().unwrap_or_else(|p| p.into_inner()));
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

/// Resolves when `up` stops every model (`all`) or this one's own stop is sent. A dropped
/// sender is not a stop (a deployment nobody manages stops with `up`).
pub async fn either(mut all: watch::Receiver<bool>, own: oneshot::Receiver<()>) {
    let own = async {
        if own.await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        _ = all.wait_for(|stop| *stop) => {}
        _ = own => {}
    }
}
