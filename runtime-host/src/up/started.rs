//! What `up` has started so far, so that a stop at any moment (Ctrl-C during start-up as much
//! as after "stack ready") stops exactly that, in order: the models first (each unregisters
//! while the registry still runs), then the registry, chat and the app port.

use anyhow::Result;
use std::future::Future;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub struct Started {
    stop_models: watch::Sender<bool>,
    stop_services: watch::Sender<bool>,
    models: Vec<JoinHandle<Result<()>>>,
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
            models: Vec::new(),
            services: Vec::new(),
        }
    }

    /// What a model deployment waits on to stop.
    pub fn model_stopper(&self) -> impl Future<Output = ()> + use<> {
        stopper(&self.stop_models.subscribe())
    }

    /// What a service (registry, chat, app port) waits on to stop.
    pub fn service_stopper(&self) -> impl Future<Output = ()> + use<> {
        stopper(&self.stop_services.subscribe())
    }

    pub fn model(&mut self, task: JoinHandle<Result<()>>) {
        self.models.push(task);
    }

    pub fn service(&mut self, task: JoinHandle<Result<()>>) {
        self.services.push(task);
    }

    /// Stops everything started, in order, and waits for it.
    pub async fn stop(self) {
        self.stop_models.send_replace(true);
        for t in self.models {
            let _ = t.await;
        }
        self.stop_services.send_replace(true);
        for t in self.services {
            let _ = t.await;
        }
        tracing::info!("stack stopped");
    }
}
