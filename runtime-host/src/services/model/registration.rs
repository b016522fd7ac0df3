//! The model's side of the port registry: register (before any port is bound), heartbeat,
//! register again when the registry has forgotten us, unregister at shutdown.

use anyhow::{Result, bail};
use edge_api::registry::{HeartbeatResponse, RegistrationRequest, RegistrationResponse};
use host_core::support::duration::parse_duration;
use hyper::Method;
use serde_json::json;
use service_client::HttpClient;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Each registry call gives up after this long; a registry that does not answer counts as
/// unavailable (spec 7: that must never fail a shutdown).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(2);

/// The shortest time between heartbeats, however short the registry's lease.
const MIN_HEARTBEAT: Duration = Duration::from_millis(250);

/// What the deployment knows about its registration; shared by the heartbeat task and the
/// shutdown path.
#[derive(Debug, Clone)]
pub struct State {
    pub port: u16,
    pub registration_id: Option<String>,
    pub registry_available: bool,
    /// The lease the registry granted last (its `expires_at` minus the time it answered).
    pub lease: Option<Duration>,
}

/// How long the lease ending at `expires_at` (the registry's ISO 8601 UTC time) still runs.
pub fn lease_left(expires_at: &str) -> Option<Duration> {
    let end = edge_api::time::parse_iso8601_no_zone(expires_at)?;
    end.duration_since(std::time::SystemTime::now()).ok()
}

/// Time until the next heartbeat: a third of the lease, so two heartbeats may be lost
/// before it runs out, and never more than `--heartbeat-interval`.
pub fn heartbeat_delay(configured: Duration, lease: Option<Duration>) -> Duration {
    match lease {
        Some(lease) => configured.min(lease / 3).max(MIN_HEARTBEAT),
        None => configured,
    }
}

pub type Shared = Arc<Mutex<State>>;

/// `--registry-wait`, one flag for every command that deploys models (`model`, `up`).
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct RegistryWait {
    /// How long to keep trying the registry at start-up.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub registry_wait: Duration,
}

/// How one deployment talks to its registry.
#[derive(Debug, Clone)]
pub struct DeployOptions {
    /// `app_name` to register under. Deployments in one process must differ in it (or in the
    /// model name): the registry treats the same process, app and model as a retry.
    pub app_name: String,
    pub registry: String,
    pub preferred_port: Option<u16>,
    pub host: std::net::IpAddr,
    pub heartbeat_interval: Duration,
    pub registry_wait: Duration,
    /// One self-test try's deadline (`--self-test-deadline`).
    pub self_test_deadline: Duration,
    /// The deployed version (`up`: a digest of the model's files), in the registration's
    /// metadata as `model_version`.
    pub model_version: Option<String>,
}

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
            let why = format!(
                "registration refused (HTTP {}): {}",
                reply.status,
                reply.error_text()
            );
            // 400, 413 and 422 say the request itself is wrong (a name too long, a bad
            // field): asking again changes nothing. A 403 (a holder's limit) or 409 may clear
            // once a lease ends, so those are asked again.
            if matches!(reply.status, 400 | 413 | 422) {
                return Err(anyhow::Error::new(Permanent(why)));
            }
            bail!(why);
        }
        reply.json()
    }

    /// Registers, retrying with backoff until `wait` has passed (a refusal that will not
    /// change, at once).
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
                Err(e) if e.is::<Permanent>() => return Err(e),
                Err(e) if started.elapsed() + delay > wait => return Err(e),
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), retry_in = ?delay, "registry not reachable yet");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(2));
                }
            }
        }
    }

    /// Keeps the registration alive: heartbeats a third of the way into each lease (at most
    /// every `interval`); registers again (asking for the same port) when the registry no
    /// longer knows us or we never got through.
    pub async fn keep_alive(self: Arc<Self>, state: Shared, interval: Duration) {
        loop {
            let (port, id, lease) = {
                let s = state.lock().unwrap();
                (s.port, s.registration_id.clone(), s.lease)
            };
            tokio::time::sleep(heartbeat_delay(interval, lease)).await;
            let outcome = match &id {
                Some(id) => self.heartbeat(port, id).await,
                None => Ok(None),
            };
            let reachable = match outcome {
                Ok(Some(renewed)) => {
                    state.lock().unwrap().lease = lease_left(&renewed.expires_at);
                    true
                }
                Ok(None) => self.reregister(&state, port).await,
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

    /// `Ok(Some)` renewed, `Ok(None)` the registry does not know this registration.
    pub async fn heartbeat(&self, port: u16, id: &str) -> Result<Option<HeartbeatResponse>> {
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
            200 => Ok(Some(reply.json()?)),
            404 | 403 => Ok(None),
            s => bail!("heartbeat answered {s}: {}", reply.error_text()),
        }
    }

    /// Registers again for the port we serve on; returns whether the registry answered.
    async fn reregister(&self, state: &Shared, port: u16) -> bool {
        match self.register(Some(port)).await {
            Ok(r) if r.assigned_port == port => {
                tracing::info!(port, "registered again");
                let mut s = state.lock().unwrap();
                s.lease = lease_left(&r.expires_at);
                s.registration_id = Some(r.registration_id);
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

/// Unregisters if registered; a registry that does not answer is skipped (spec 7).
pub async fn release(registry: &Registry, state: &Shared) {
    let (port, id) = {
        let s = state.lock().unwrap();
        (s.port, s.registration_id.clone())
    };
    let Some(id) = id else { return };
    match registry.unregister(port, &id).await {
        Ok(()) => tracing::info!(port, "unregistered"),
        Err(e) => {
            tracing::warn!(error = %format!("{e:#}"), "registry unreachable; unregistration skipped")
        }
    }
}

/// A refusal of the registration that asking again would not change (a 4xx).
#[derive(Debug)]
pub struct Permanent(String);

impl std::fmt::Display for Permanent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Permanent {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heartbeats_follow_the_lease() {
        let configured = Duration::from_secs(30);
        assert_eq!(heartbeat_delay(configured, None), configured);
        assert_eq!(
            heartbeat_delay(configured, Some(Duration::from_secs(120))),
            configured
        );
        assert_eq!(
            heartbeat_delay(configured, Some(Duration::from_secs(3))),
            Duration::from_secs(1)
        );
        assert_eq!(
            heartbeat_delay(configured, Some(Duration::from_millis(30))),
            MIN_HEARTBEAT
        );
    }

    #[test]
    fn lease_is_read_from_expires_at() {
        let later = std::time::SystemTime::now() + Duration::from_secs(60);
        let left = lease_left(&edge_api::time::iso8601_no_zone(later)).unwrap();
        assert!(left > Duration::from_secs(58) && left <= Duration::from_secs(60));
        assert_eq!(lease_left("2000-01-01T00:00:00"), None);
        assert_eq!(lease_left("not a time"), None);
    }
}
