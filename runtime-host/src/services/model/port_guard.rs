//! Busy ports kept out of the registry's hands: when the port a deployment was assigned is
//! held by a process outside the registry, a guard registration holds it (so the registry
//! does not hand it out again while it is busy) until the port is free again.

use crate::services::model::registration::{self, DeployOptions, Registry, State};
use std::sync::{Arc, Mutex};

/// A registration that holds a port some other process occupies, so the registry does not
/// assign it; released as soon as the port is free again (checked every heartbeat).
pub struct PortGuard {
    pub port: u16,
    registry: Arc<Registry>,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl PortGuard {
    pub async fn reserve(main: &Registry, opts: &DeployOptions, port: u16) -> Option<Self> {
        let mut request = main.request.clone();
        request.app_name = format!("{}/busy-port-guard", main.request.app_name);
        // One registration per busy port: the same name twice would be a retry of the first.
        request.model_name = format!("{}-port-{port}", main.request.model_name);
        request.reason = format!(
            "port {port} is held by a process outside the registry; reserved while it stays busy"
        );
        let registry = Arc::new(Registry::new(&opts.registry, request));
        let r = registry.register(Some(port)).await.ok()?;
        if r.assigned_port != port {
            let _ = registry
                .unregister(r.assigned_port, &r.registration_id)
                .await;
            return None;
        }
        tracing::info!(port, "reserved the busy port in the registry");
        let state = Arc::new(Mutex::new(State {
            port,
            lease: registration::lease_left(&r.expires_at),
            registration_id: Some(r.registration_id),
            registry_available: true,
        }));
        let (reg, st, host, every) = (
            registry.clone(),
            state.clone(),
            opts.host,
            opts.heartbeat_interval,
        );
        let task = tokio::spawn(async move {
            loop {
                let lease = st.lock().unwrap().lease;
                tokio::time::sleep(registration::heartbeat_delay(every, lease)).await;
                if std::net::TcpListener::bind((host, port)).is_ok() {
                    tracing::info!(
                        port,
                        "the busy port is free again; releasing its reservation"
                    );
                    registration::release(&reg, &st).await;
                    st.lock().unwrap().registration_id = None;
                    return;
                }
                let id = st.lock().unwrap().registration_id.clone();
                if let Some(id) = id
                    && let Ok(Some(renewed)) = reg.heartbeat(port, &id).await
                {
                    st.lock().unwrap().lease = registration::lease_left(&renewed.expires_at);
                }
            }
        });
        Some(Self {
            port,
            registry,
            state,
            task,
        })
    }

    async fn release(self) {
        self.task.abort();
        registration::release(&self.registry, &self.state).await;
    }

    pub async fn release_all(guards: Vec<Self>) {
        for guard in guards {
            guard.release().await;
        }
    }
}
