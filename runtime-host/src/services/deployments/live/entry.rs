//! What the live set keeps of each deployment it manages, and how the admin API sees it.

use crate::services::model::spec::ModelSpec;
use crate::services::model::versions::Fingerprint;
use edge_api::error::ErrorCode;
use host_core::capabilities::keyvalue::KeyValue;
use host_core::http::slot::ServerSlot;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::oneshot;

/// One deployment the live set manages.
pub(super) struct Entry {
    pub(super) state: State,
    pub(super) version: String,
    pub(super) source: PathBuf,
    pub(super) origin: Origin,
    /// The files of the version serving (none before one serves).
    pub(super) fingerprint: Fingerprint,
    /// The last version refused: not tried again until its files change.
    pub(super) refused: Option<Refusal>,
    /// The version before the one serving, whose requests may still be finishing: its
    /// snapshot is kept until the next version comes.
    pub(super) previous_version: Option<String>,
}

/// Where a deployment is in its life. `Starting` and `Upgrading` are busy: a version is
/// being deployed, and later scans and reloads leave it alone until that is done.
pub(super) enum State {
    /// Its first version (or, after a failure, a new one) is starting: nothing serves yet.
    Starting,
    Serving(Placement),
    /// Serving, while a new version is loaded beside it; it takes over only if it passes its
    /// self-test.
    Upgrading(Placement),
    /// Its last start failed, and why: nothing serves.
    Failed {
        why: String,
    },
}

/// A deployment that serves: its place on the app port and its registration.
pub(super) struct Placement {
    pub(super) slot: Arc<ServerSlot>,
    pub(super) kv: KeyValue,
    pub(super) addr: SocketAddr,
    /// Stops it alone (see `DeploymentTasks::own_stop`).
    pub(super) stop: oneshot::Sender<()>,
}

/// A version refused: its files, and why.
pub(super) struct Refusal {
    pub(super) files: Fingerprint,
    pub(super) why: String,
}

/// Where a deployment came from, and so who manages it: the models directory (watched or
/// not), this installation's own model components (`up` without `--models`), or the admin
/// API (kept in the data directory across restarts; the directory's scans leave it alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Directory,
    Installation,
    Api,
}

/// A deployment's state as the admin API says it (the `status` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Starting,
    Serving,
    Upgrading,
    Failed,
}

/// A deployment as the admin API lists it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Listing {
    pub name: String,
    pub status: Status,
    pub version: String,
    pub source: PathBuf,
    pub origin: Origin,
    /// Where it serves (while serving or upgrading).
    pub url: Option<String>,
    /// Why the last version tried was refused: one that failed to start, or a new one that
    /// did not take over (the one serving, if any, kept serving).
    pub refused: Option<String>,
}

/// What the live set does with a deployment it claimed ([`Entry::claim`]).
pub(super) enum Action {
    Add,
    Upgrade,
}

impl State {
    pub(super) fn is_busy(&self) -> bool {
        matches!(self, Self::Starting | Self::Upgrading(_))
    }

    /// The deployment serving, if one does (while upgrading too).
    pub(super) fn running(&self) -> Option<&Placement> {
        match self {
            Self::Serving(running) | Self::Upgrading(running) => Some(running),
            Self::Starting | Self::Failed { .. } => None,
        }
    }

    fn status(&self) -> Status {
        match self {
            Self::Starting => Status::Starting,
            Self::Serving(_) => Status::Serving,
            Self::Upgrading(_) => Status::Upgrading,
            Self::Failed { .. } => Status::Failed,
        }
    }
}

impl Entry {
    /// A model being added: nothing serving yet, and busy so no other scan adds it again.
    pub(super) fn starting(spec: &ModelSpec, origin: Origin) -> Self {
        Self {
            state: State::Starting,
            version: String::new(),
            source: spec.source.clone(),
            origin,
            fingerprint: Fingerprint::default(),
            refused: None,
            previous_version: None,
        }
    }

    /// A model that did not start, with its files and why.
    pub(super) fn failed(source: PathBuf, origin: Origin, refusal: Refusal) -> Self {
        Self {
            state: State::Failed {
                why: refusal.why.clone(),
            },
            version: String::new(),
            source,
            origin,
            fingerprint: Fingerprint::default(),
            refused: Some(refusal),
            previous_version: None,
        }
    }

    /// Marks the deployment busy with a new version and says which: an upgrade of the one
    /// serving, or a new start of one that failed. `None` while it is busy already.
    pub(super) fn claim(&mut self) -> Option<Action> {
        match std::mem::replace(&mut self.state, State::Starting) {
            State::Serving(running) => {
                self.state = State::Upgrading(running);
                Some(Action::Upgrade)
            }
            State::Failed { .. } => Some(Action::Add),
            busy @ (State::Starting | State::Upgrading(_)) => {
                self.state = busy;
                None
            }
        }
    }

    /// The claimed version's work is over: what served before serves on (an upgrade that
    /// took over has put its version in place already); a start that failed leaves it
    /// failed, with why.
    pub(super) fn settle(&mut self, refused: Option<Refusal>) {
        self.state = match std::mem::replace(&mut self.state, State::Starting) {
            State::Upgrading(running) | State::Serving(running) => State::Serving(running),
            State::Starting | State::Failed { .. } => match &refused {
                Some(refusal) => State::Failed {
                    why: refusal.why.clone(),
                },
                None => State::Failed {
                    why: "the deployment stopped".into(),
                },
            },
        };
        if refused.is_some() {
            self.refused = refused;
        }
    }

    pub(super) fn listed(&self, name: &str) -> Listing {
        Listing {
            name: name.to_owned(),
            status: self.state.status(),
            version: self.version.clone(),
            source: self.source.clone(),
            origin: self.origin,
            url: self.state.running().map(|r| format!("http://{}", r.addr)),
            refused: self.refused.as_ref().map(|r| r.why.clone()),
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

impl Refused {
    /// The error code (and with it the HTTP status) the admin API answers with.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            Self::Taken => ErrorCode::AlreadyExists,
            Self::Unknown | Self::Gone => ErrorCode::NotFound,
            Self::Busy => ErrorCode::Overloaded,
            // The specification's code for a model that failed its self-test or did not load.
            Self::Failed(_) => ErrorCode::NotReady,
        }
    }

    /// What the admin API says about deployment `name`; `failed` says what a refused version
    /// means for it.
    pub fn message(&self, name: &str, failed: &str) -> String {
        match self {
            Self::Taken => format!(
                "a deployment named {name} exists; undeploy it first, reload it, or choose another name"
            ),
            Self::Unknown | Self::Gone => format!("no deployment named {name}"),
            Self::Busy => format!("{name} is starting or being upgraded; retry shortly"),
            Self::Failed(why) => format!("{name} {failed}: {why}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed() -> Entry {
        let refusal = Refusal {
            files: Fingerprint::default(),
            why: "self-test failed".into(),
        };
        Entry::failed(PathBuf::from("/m/iris"), Origin::Directory, refusal)
    }

    #[test]
    fn a_failed_deployment_is_claimed_for_a_new_start_once() {
        let mut entry = failed();
        assert_eq!(entry.listed("iris").status, Status::Failed);
        assert!(matches!(entry.claim(), Some(Action::Add)));
        assert_eq!(entry.listed("iris").status, Status::Starting);
        assert!(entry.claim().is_none(), "busy: not claimed twice");
    }

    #[test]
    fn a_start_that_fails_again_says_the_new_why() {
        let mut entry = failed();
        entry.claim();
        entry.settle(Some(Refusal {
            files: Fingerprint::default(),
            why: "AI model missing".into(),
        }));
        let listed = entry.listed("iris");
        assert_eq!(listed.status, Status::Failed);
        assert_eq!(listed.refused.as_deref(), Some("AI model missing"));
        assert!(matches!(&entry.state, State::Failed { why } if why == "AI model missing"));
        let json = serde_json::to_value(&listed).unwrap();
        assert_eq!(json["status"], "failed");
        assert_eq!(json["url"], serde_json::Value::Null);
    }
}
