//! Outgoing HTTP (`wasi:http/outgoing-handler`) as Spin grants it: a component may send a
//! request only where its `allowed_outbound_hosts` admits the URL's scheme, host and port
//! ([`rules`]); nothing is admitted by default. Beyond Spin, loopback, private, link-local
//! and metadata addresses are reached only where a rule names the very address
//! ([`address`]), whether the URL holds it or a host name resolves to it.
//!
//! The seam is wasmtime-wasi-http's `WasiHttpHooks::send_request`, which every outgoing
//! request of an instance passes through ([`send`]); the rules are parsed once per component
//! when its grants are made, and an instance holds them by reference. A refusal is the
//! component's error (`error-code::http-request-denied`), logged and counted
//! (`runtime_host_outbound_denied_total`).
//!
//! Redirects: wasi-http never follows one (its client sends exactly one request and hands
//! the guest whatever comes back, a 3xx included), so a redirect to a refused address goes
//! nowhere unless the guest follows it itself, and then its second request is checked as any
//! other.

pub mod address;
pub mod rules;
mod send;

#[cfg(test)]
mod tests;

use host_metrics::Deployment;
use rules::AllowedHosts;
use std::sync::Arc;

/// What one component may reach, as its instances hold it: the rules, shared, and the
/// deployment whose log lines and counter a refusal goes to.
#[derive(Clone)]
pub struct Outbound {
    hosts: Arc<AllowedHosts>,
    deployment: Deployment,
    /// The deployment's name, for the log (the metric holds its own copy).
    name: Arc<str>,
}

impl Outbound {
    /// The grant of `allowed_outbound_hosts = entries` (Spin's syntax); the error names the
    /// entry that is wrong and why.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> anyhow::Result<Self> {
        let hosts = AllowedHosts::parse(entries)
            .map_err(|why| anyhow::anyhow!("invalid allowed outbound host {why}"))?;
        Ok(Self::of(hosts))
    }

    /// No outgoing HTTP at all (a component that declares none, a pre-initialization).
    pub fn none() -> Self {
        Self::of(AllowedHosts::default())
    }

    fn of(hosts: AllowedHosts) -> Self {
        Self {
            hosts: Arc::new(hosts),
            deployment: Deployment::new("unnamed"),
            name: Arc::from("unnamed"),
        }
    }

    /// The same grant, its refusals logged and counted as deployment `name`'s.
    pub fn for_deployment(&self, name: &str) -> Self {
        Self {
            hosts: self.hosts.clone(),
            deployment: Deployment::new(name),
            name: Arc::from(name),
        }
    }

    /// Whether nothing at all is admitted.
    pub fn is_none(&self) -> bool {
        self.hosts.is_empty()
    }

    /// Refuses a request to `authority`: logged, counted, and the component's error.
    fn deny(&self, authority: &str, why: &str) -> wasmtime_wasi_http::Error {
        tracing::warn!(
            deployment = %self.name,
            authority,
            "outgoing HTTP request denied: {why}"
        );
        self.deployment.outbound_denied();
        wasmtime_wasi_http::Error::HttpRequestDenied
    }
}

impl Default for Outbound {
    fn default() -> Self {
        Self::none()
    }
}
