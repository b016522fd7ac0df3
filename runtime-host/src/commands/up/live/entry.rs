//! What `up` keeps of each deployment it manages, and how the admin API sees it.

use crate::services::model::spec::ModelSpec;
use crate::services::model::versions::Fingerprint;
use host_core::capabilities::keyvalue::KeyValue;
use host_core::http::slot::ServerSlot;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::oneshot;

/// One deployment `up` manages.
pub(super) struct Entry {
    /// `None` while it is starting (or when its start failed).
    pub(super) slot: Option<Arc<ServerSlot>>,
    pub(super) kv: Option<KeyValue>,
    pub(super) version: String,
    pub(super) source: PathBuf,
    pub(super) origin: Origin,
    /// Where it serves, once it does.
    pub(super) addr: Option<SocketAddr>,
    pub(super) fingerprint: Fingerprint,
    /// The files of the last version that failed to deploy, and why: not tried again until
    /// they change.
    pub(super) rejected: Option<(Fingerprint, String)>,
    /// The version before the one serving, whose requests may still be finishing: its
    /// snapshot is kept until the next version comes.
    pub(super) previous_version: Option<String>,
    pub(super) stop: Option<oneshot::Sender<()>>,
    /// A version is being deployed: later scans leave it alone until that is done.
    pub(super) busy: bool,
}

/// Who manages a deployment: the watched directory, or the admin API (which the directory's
/// scans leave alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Directory,
    Api,
}

/// A deployment as the admin API lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Listed {
    pub name: String,
    /// `serving`, `starting`, `upgrading` or `failed`.
    pub status: &'static str,
    pub version: String,
    pub source: PathBuf,
    pub origin: Origin,
    pub url: Option<String>,
    /// Why the last version tried was refused: one that failed to start, or a new one that
    /// did not take over (the one serving, if any, kept serving).
    pub refused: Option<String>,
}

impl Entry {
    /// A model being added: nothing serving yet, and busy so no other scan adds it again.
    pub(super) fn starting(spec: &ModelSpec, origin: Origin) -> Self {
        Self {
            slot: None,
            kv: None,
            version: String::new(),
            source: spec.source.clone(),
            origin,
            addr: None,
            fingerprint: Fingerprint::default(),
            rejected: None,
            previous_version: None,
            stop: None,
            busy: true,
        }
    }
}

impl Entry {
    /// A model that did not start: `rejected` holds its files' fingerprint and why.
    pub(super) fn failed(source: PathBuf, origin: Origin, rejected: (Fingerprint, String)) -> Self {
        Self {
            slot: None,
            kv: None,
            version: String::new(),
            source,
            origin,
            addr: None,
            fingerprint: Fingerprint::default(),
            rejected: Some(rejected),
            previous_version: None,
            stop: None,
            busy: false,
        }
    }

    pub(super) fn listed(&self, name: &str) -> Listed {
        let status = match (&self.slot, self.busy) {
            (Some(_), true) => "upgrading",
            (Some(_), false) => "serving",
            (None, true) => "starting",
            (None, false) => "failed",
        };
        Listed {
            name: name.to_owned(),
            status,
            version: self.version.clone(),
            source: self.source.clone(),
            origin: self.origin,
            url: self.addr.map(|a| format!("http://{a}")),
            refused: self.rejected.as_ref().map(|(_, why)| why.clone()),
        }
    }
}

/// Why the admin API's request was not carried out.
#[derive(Debug)]
pub enum Refused {
    /// A deployment of that name exists.
    Taken,
    /// No deployment of that name.
    Unknown,
    /// It is starting or being upgraded.
    Busy,
    /// It was removed meanwhile.
    Gone,
    /// The version failed (compilation, self-test, registration): why.
    Failed(String),
}
