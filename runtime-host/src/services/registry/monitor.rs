//! Process health monitoring for the registry (spec 9: "v1.2 registries add process health
//! monitoring"): every interval, look up each registered process id on this machine; report
//! the dead ones (whose registrations the component then removes, freeing their ports) and
//! the live ones (shown as `process_alive: true`).

use anyhow::{Result, bail};
use edge_api::registry::RegistryListing;
use hyper::Method;
use serde_json::json;
use service_client::HttpClient;
use std::time::Duration;

const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs forever (until the process stops), checking at once and then every `interval`.
pub async fn run(registry_url: String, secret: String, interval: Duration) {
    let client = HttpClient::new(CALL_TIMEOUT);
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        if let Err(e) = check_once(&client, &registry_url, &secret).await {
            tracing::warn!(error = %format!("{e:#}"), "process check failed; will retry");
        }
    }
}

async fn check_once(client: &HttpClient, url: &str, secret: &str) -> Result<()> {
    let reply = client
        .send(Method::GET, &format!("{url}/registry"), None, None)
        .await?;
    if reply.status != 200 {
        bail!(
            "GET /registry answered {}: {}",
            reply.status,
            reply.error_text()
        );
    }
    let listing: RegistryListing = reply.json()?;
    host_core::metrics::global()
        .registry_active
        .set(listing.registrations.len() as i64);
    let (mut alive, mut dead) = (Vec::new(), Vec::new());
    for r in &listing.registrations {
        let entry = json!({"port": r.port, "process_id": r.process_id});
        match process_alive(r.process_id) {
            Some(true) => alive.push(entry),
            Some(false) => dead.push(entry),
            None => {}
        }
    }
    let newly_alive = listing
        .registrations
        .iter()
        .any(|r| r.process_alive != Some(true) && process_alive(r.process_id) == Some(true));
    if dead.is_empty() && !newly_alive {
        return Ok(());
    }
    let body = serde_json::to_vec(&json!({"alive": alive, "dead": dead}))?;
    let reply = client
        .send(
            Method::POST,
            &format!("{url}/registry/maintenance/processes"),
            Some(body),
            Some(secret),
        )
        .await?;
    if reply.status != 200 {
        bail!(
            "process report answered {}: {}",
            reply.status,
            reply.error_text()
        );
    }
    let outcome: serde_json::Value = reply.json()?;
    if let Some(removed) = outcome["removed"].as_array().filter(|r| !r.is_empty()) {
        host_core::metrics::global()
            .registry_reaped
            .inc_by(removed.len() as u64);
        tracing::info!(ports = ?removed, "removed registrations of processes that are gone");
    }
    Ok(())
}

/// Whether process `pid` is running on this machine; `None` where that cannot be told.
/// A zombie (exited, not yet reaped by its parent) counts as gone.
pub fn process_alive(pid: u32) -> Option<bool> {
    #[cfg(target_os = "linux")]
    {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => {
                // Format: "pid (comm) state ...": comm may hold spaces and parentheses.
                let state = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.trim_start().chars().next());
                Some(!matches!(state, Some('Z' | 'X')))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(false),
            Err(_) => None,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sees_itself_and_not_a_reaped_child() {
        assert_eq!(super::process_alive(std::process::id()), Some(true));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert_eq!(super::process_alive(pid), Some(false));
    }
}
