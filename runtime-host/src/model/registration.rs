//! The model's side of the port registry: register (before any port is bound), heartbeat,
//! register again when the registry has forgotten us, unregister at shutdown.

use crate::client::HttpClient;
use anyhow::{Result, bail};
use edge_api::registry::{RegistrationRequest, RegistrationResponse};
use hyper::Method;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Each registry call gives up after this long; a registry that does not answer counts as
/// unavailable (spec 7: that must never fail a shutdown).
const CALL_TIMEOUT: Duration = Duration::from_secs(2);

/// What the deployment knows about its registration; shared by the heartbeat task and the
/// shutdown path.
#[derive(Debug, Clone)]
pub struct State {
    pub port: u16,
    pub registration_id: Option<String>,
    pub registry_available: bool,
}

pub type Shared = Arc<Mutex<State>>;

pub struct Registry {
    url: String,
    client: HttpClient,
    pub request: RegistrationRequest,
}

impl Registry {
    pub fn new(url: &str, request: RegistrationRequest) -> Self {
        Self {
            url: url.trim_end_matches('/').to_owned(),
            client: HttpClient::new(CALL_TIMEOUT),
            request,
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// One `POST /register`, asking for `preferred`.
    pub async fn register(&self, preferred: Option<u16>) -> Result<RegistrationResponse> {
        let mut body = self.request.clone();
        body.preferred_port = preferred;
        let reply = self
            .client
            .send(
                Method::POST,
                &format!("{}/register", self.url),
                Some(serde_json::to_vec(&body)?),
                None,
            )
            .await?;
        if reply.status != 200 {
            bail!(
                "registration refused (HTTP {}): {}",
                reply.status,
                reply.error_text()
            );
        }
        reply.json()
    }

    /// Registers, retrying with backoff until `wait` has passed.
    pub async fn register_within(
        &self,
        preferred: Option<u16>,
        wait: Duration,
    ) -> Result<RegistrationResponse> {
        let started = Instant::now();
        let mut delay = Duration::from_millis(100);
        loop {
            match self.register(preferred).await {
                Ok(r) => return Ok(r),
                Err(e) if started.elapsed() + delay > wait => return Err(e),
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), retry_in = ?delay, "registry not reachable yet");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(2));
                }
            }
        }
    }

    /// Keeps the registration alive: heartbeats every `interval`; registers again (asking for
    /// the same port) when the registry no longer knows us or we never got through.
    pub async fn keep_alive(self: Arc<Self>, state: Shared, interval: Duration) {
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticker.tick().await;
        loop {
            ticker.tick().await;
            let (port, id) = {
                let s = state.lock().unwrap();
                (s.port, s.registration_id.clone())
            };
            let outcome = match &id {
                Some(id) => self.heartbeat(port, id).await,
                None => Ok(false),
            };
            let reachable = match outcome {
                Ok(true) => true,
                Ok(false) => self.reregister(&state, port).await,
                Err(e) => {
                    tracing::debug!(error = %format!("{e:#}"), "heartbeat failed");
                    false
                }
            };
            let mut s = state.lock().unwrap();
            if s.registry_available != reachable {
                if reachable {
                    tracing::info!(registry = %self.url, "registry available again");
                } else {
                    tracing::warn!(registry = %self.url, "registry unavailable; serving on and retrying");
                }
                s.registry_available = reachable;
            }
        }
    }

    /// `Ok(true)` renewed, `Ok(false)` the registry does not know this registration.
    pub async fn heartbeat(&self, port: u16, id: &str) -> Result<bool> {
        let body = serde_json::to_vec(&json!({"registration_id": id}))?;
        let reply = self
            .client
            .send(
                Method::POST,
                &format!("{}/heartbeat/{port}", self.url),
                Some(body),
                None,
            )
            .await?;
        match reply.status {
            200 => Ok(true),
            404 | 403 => Ok(false),
            s => bail!("heartbeat answered {s}: {}", reply.error_text()),
        }
    }

    /// Registers again for the port we serve on; returns whether the registry answered.
    async fn reregister(&self, state: &Shared, port: u16) -> bool {
        match self.register(Some(port)).await {
            Ok(r) if r.assigned_port == port => {
                tracing::info!(port, "registered again");
                state.lock().unwrap().registration_id = Some(r.registration_id);
                true
            }
            Ok(r) => {
                // Someone else holds our port in the registry; give the other port back.
                tracing::warn!(
                    port,
                    offered = r.assigned_port,
                    "registry offered another port; keeping ours and retrying"
                );
                let _ = self.unregister(r.assigned_port, &r.registration_id).await;
                true
            }
            Err(e) => {
                tracing::debug!(error = %format!("{e:#}"), "registering again failed");
                false
            }
        }
    }

    pub async fn unregister(&self, port: u16, id: &str) -> Result<()> {
        let url = format!("{}/unregister/{port}?registration_id={id}", self.url);
        let reply = self.client.send(Method::DELETE, &url, None, None).await?;
        if reply.status != 200 {
            bail!(
                "unregistration answered {}: {}",
                reply.status,
                reply.error_text()
            );
        }
        Ok(())
    }
}
