//! The models of `up --models DIR` while it runs: each added, upgraded or removed without
//! touching the others ([`super::watch`] finds the changes).
//!
//! - **Add**: compiled, self-tested, registered and bound like a model deployed at start-up,
//!   then routed on the app port.
//! - **Upgrade** (the component or the model directory changed): the new version is loaded
//!   beside the old one with the same stores and must pass its self-test; only then does it
//!   take the deployment's place ([`ServerSlot`]): same port, same registration, and the old
//!   version's requests in flight finish on it. A version that fails never takes traffic:
//!   the old one keeps serving, and the reason is logged and kept ([`Live::list`]).
//! - **Remove**: no longer routed, then stopped like any deployment (requests in flight
//!   finish, the registration is given back).
//!
//! A model directory is served from a snapshot (a copy under the data directory), so the
//! files of a version do not change under it while the next one is being written.

use super::deploy::{Deployer, Ready};
use super::models::ModelSpec;
use crate::app::AppRouter;
use crate::keyvalue::KeyValue;
use crate::slot::ServerSlot;
use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;
use tokio::sync::{Mutex, oneshot};
use tokio::task::JoinHandle;

/// What a model's files look like now (path, size, modification time of each file): cheap
/// to take every scan; a difference means a new version.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fingerprint(Vec<(PathBuf, u64, Option<SystemTime>)>);

impl Fingerprint {
    pub fn of(source: &Path) -> Self {
        let mut files = Vec::new();
        walk(source, &mut |p, meta| {
            files.push((p.to_owned(), meta.len(), meta.modified().ok()))
        });
        files.sort();
        Self(files)
    }
}

/// Calls `visit` on every file under `path` (or `path` itself, if a file).
fn walk(path: &Path, visit: &mut dyn FnMut(&Path, &std::fs::Metadata)) {
    let Ok(meta) = std::fs::metadata(path) else {
        return;
    };
    if meta.is_file() {
        visit(path, &meta);
    } else if meta.is_dir()
        && let Ok(entries) = std::fs::read_dir(path)
    {
        for e in entries.flatten() {
            walk(&e.path(), visit);
        }
    }
}

/// A version's name: `sha256:` and the first 12 hex digits of the SHA-256 of its files
/// (relative paths and contents, in order), so the same files are the same version on
/// every machine.
pub fn version_of(source: &Path) -> Result<String> {
    let mut files = Vec::new();
    walk(source, &mut |p, _| files.push(p.to_owned()));
    files.sort();
    let mut hash = Sha256::new();
    for file in &files {
        let relative = file.strip_prefix(source).unwrap_or(file);
        hash.update(relative.to_string_lossy().as_bytes());
        hash.update([0]);
        hash.update(std::fs::read(file).with_context(|| format!("reading {}", file.display()))?);
    }
    let digest = hash.finalize();
    let hex: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}

/// One deployment `up` manages.
struct Entry {
    /// `None` while it is starting.
    slot: Option<Arc<ServerSlot>>,
    kv: Option<KeyValue>,
    version: String,
    fingerprint: Fingerprint,
    /// The files of the last version that failed to deploy, and why: not tried again until
    /// they change.
    rejected: Option<(Fingerprint, String)>,
    stop: Option<oneshot::Sender<()>>,
    /// A version is being deployed: later scans leave it alone until that is done.
    busy: bool,
}

impl Entry {
    /// A model being added: nothing serving yet, and busy so no other scan adds it again.
    fn starting() -> Self {
        Self {
            slot: None,
            kv: None,
            version: String::new(),
            fingerprint: Fingerprint::default(),
            rejected: None,
            stop: None,
            busy: true,
        }
    }
}

enum Action {
    Add,
    Upgrade,
}

pub struct Live {
    deployer: Deployer,
    app: Arc<AppRouter>,
    /// Every deployment task, awaited when `up` stops.
    tasks: Arc<std::sync::Mutex<Vec<JoinHandle<Result<()>>>>>,
    /// `up`'s stop for every model.
    stop_all: tokio::sync::watch::Receiver<bool>,
    entries: Mutex<BTreeMap<String, Entry>>,
}

impl Live {
    pub fn new(
        deployer: Deployer,
        app: Arc<AppRouter>,
        tasks: Arc<std::sync::Mutex<Vec<JoinHandle<Result<()>>>>>,
        stop_all: tokio::sync::watch::Receiver<bool>,
    ) -> Arc<Self> {
        Arc::new(Self {
            deployer,
            app,
            tasks,
            stop_all,
            entries: Mutex::new(BTreeMap::new()),
        })
    }

    pub async fn names(&self) -> Vec<String> {
        self.entries.lock().await.keys().cloned().collect()
    }

    /// Takes `spec` as it is now: adds it if new, upgrades it if its files changed since
    /// the version serving (and since a version refused).
    pub async fn ensure(self: &Arc<Self>, spec: ModelSpec, fingerprint: Fingerprint) {
        let name = spec.name.clone();
        // Decided and marked under one lock, so two scans never deploy the same model at once.
        let action = {
            let mut entries = self.entries.lock().await;
            match entries.get_mut(&name) {
                None => {
                    entries.insert(name.clone(), Entry::starting());
                    Some(Action::Add)
                }
                Some(e) if e.busy => None,
                Some(e)
                    if e.fingerprint == fingerprint
                        || e.rejected.as_ref().is_some_and(|(f, _)| *f == fingerprint) =>
                {
                    None
                }
                // Its last start failed; these are new files: start it again.
                Some(e) if e.slot.is_none() => {
                    e.busy = true;
                    Some(Action::Add)
                }
                Some(e) => {
                    e.busy = true;
                    Some(Action::Upgrade)
                }
            }
        };
        let outcome = match action {
            None => return,
            Some(Action::Upgrade) => self.upgrade(spec, fingerprint.clone()).await,
            Some(Action::Add) => self.add(spec, fingerprint.clone()).await,
        };
        let mut entries = self.entries.lock().await;
        if let Some(entry) = entries.get_mut(&name) {
            entry.busy = false;
            if let Err(e) = outcome {
                let why = format!("{e:#}");
                tracing::error!(model = %name, error = %why, "new version refused; the deployment serving (if any) keeps serving");
                entry.rejected = Some((fingerprint, why));
            }
        }
    }

    /// Compiles `spec` (its model directory snapshotted) with its version.
    async fn prepare(&self, spec: ModelSpec) -> Result<(Ready, String)> {
        let version = version_of(&spec.source)?;
        let spec = snapshot(spec, &self.deployer.runtime.data_dir, &version)?;
        match self.deployer.prepare(spec, &mut HashMap::new()).await? {
            Ok(ready) => Ok((ready, version)),
            Err((_, why)) => anyhow::bail!(why),
        }
    }

    /// Records a deployment `up` started itself, so later changes upgrade or remove it.
    pub async fn adopt(&self, started: Adopted) {
        let entry = Entry {
            slot: Some(started.slot),
            kv: Some(started.kv),
            version: started.version,
            fingerprint: Fingerprint::of(&started.source),
            rejected: None,
            stop: Some(started.stop),
            busy: false,
        };
        self.entries.lock().await.insert(started.name, entry);
    }

    async fn add(self: &Arc<Self>, spec: ModelSpec, fingerprint: Fingerprint) -> Result<()> {
        let name = spec.name.clone();
        let source = spec.source.clone();
        tracing::info!(model = %name, source = %source.display(), "new model found; deploying");
        let (own_stop, stopped) = oneshot::channel::<()>();
        let kv = self.deployer.model_store(&name)?;
        let (ready, version) = self.prepare(spec).await?;
        let stop = either(self.stop_all.clone(), stopped);
        let (starting, task) =
            self.deployer
                .start(&ready, name.clone(), kv.clone(), &version, stop)?;
        self.tasks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(task);
        let slot = starting.slot.clone();
        match starting.outcome.await {
            Ok(Ok(addr)) => {
                if let Some(e) = self.entries.lock().await.get_mut(&name) {
                    e.slot = Some(slot.clone());
                    e.kv = Some(kv);
                    e.version = version.clone();
                    e.fingerprint = fingerprint;
                    e.stop = Some(own_stop);
                } else {
                    // Removed while it started: stop it again.
                    let _ = own_stop.send(());
                    return Ok(());
                }
                self.app.add_model(&name, &slot);
                tracing::info!(model = %name, %version, %addr, "model deployed");
                Ok(())
            }
            // Not serving: forgotten, so the next scan tries again once the files change.
            Ok(Err(why)) => {
                self.forget_failed(&name, fingerprint, &why).await;
                Err(anyhow::anyhow!(why))
            }
            Err(_) => Err(anyhow::anyhow!("the deployment stopped")),
        }
    }

    /// A model that failed to start stays listed as refused, with no deployment.
    async fn forget_failed(&self, name: &str, fingerprint: Fingerprint, why: &str) {
        if let Some(e) = self.entries.lock().await.get_mut(name) {
            e.rejected = Some((fingerprint, why.to_owned()));
            e.fingerprint = Fingerprint::default();
        }
    }

    async fn upgrade(&self, spec: ModelSpec, fingerprint: Fingerprint) -> Result<()> {
        let name = spec.name.clone();
        let (slot, kv) = {
            let entries = self.entries.lock().await;
            let e = entries.get(&name).context("no such deployment")?;
            (
                e.slot.clone().context("still starting")?,
                e.kv.clone().context("still starting")?,
            )
        };
        tracing::info!(model = %name, "model changed; loading the new version beside the serving one");
        let source = spec.source.clone();
        let (ready, version) = self.prepare(spec).await?;
        let loaded = self.deployer.load(&ready, &name, kv, &version)?;
        let (info, caps) =
            crate::model::self_test(&loaded, self.deployer.self_test_deadline).await?;
        // The registration is of a model name: a version must keep it.
        let serving = model_name(&slot).await?;
        anyhow::ensure!(
            info.name == serving,
            "the new version is model `{}`, the deployment serves `{serving}`; a version must keep \
             its model's name (deploy another model under another file name instead)",
            info.name
        );
        slot.replace(loaded.server.clone());
        let opts = self.deployer.options(&name, &version);
        let request = crate::model::registration_request(&opts, &info, &caps, &source);
        if let Err(e) = crate::model::register_again(request, &opts.registry).await {
            tracing::warn!(model = %name, error = %format!("{e:#}"), "upgraded, but the registry could not be told the new version");
        }
        let mut entries = self.entries.lock().await;
        if let Some(e) = entries.get_mut(&name) {
            e.version = version.clone();
            e.fingerprint = fingerprint;
            e.rejected = None;
        }
        tracing::info!(model = %name, %version, "upgraded: the new version takes the traffic, the old one drains");
        Ok(())
    }

    /// Stops routing `name`, then stops it (requests in flight finish; it unregisters).
    pub async fn remove(&self, name: &str) {
        let Some(mut entry) = self.entries.lock().await.remove(name) else {
            return;
        };
        self.app.remove_model(name);
        if let Some(stop) = entry.stop.take() {
            let _ = stop.send(());
        }
        tracing::info!(model = %name, "model removed; stopping it");
    }
}

/// A deployment `up` started at start-up, for [`Live::adopt`].
pub struct Adopted {
    pub name: String,
    pub slot: Arc<ServerSlot>,
    pub kv: KeyValue,
    pub version: String,
    pub source: PathBuf,
    pub stop: oneshot::Sender<()>,
}

/// A model directory's files copied to `snapshots/<name>/<version>/` of the data directory
/// and mounted from there, so a version's files stay as they were while it serves; a
/// component is read once, when compiled, and needs none.
pub fn snapshot(mut spec: ModelSpec, data_dir: &Path, version: &str) -> Result<ModelSpec> {
    if !spec.source.is_dir() {
        return Ok(spec);
    }
    let dir = data_dir
        .join("snapshots")
        .join(&spec.name)
        .join(version.replace(':', "-"));
    if !dir.is_dir() {
        let partial = dir.with_extension("partial");
        let _ = std::fs::remove_dir_all(&partial);
        copy_dir(&spec.source, &partial)?;
        std::fs::rename(&partial, &dir)?;
    }
    let dir = std::fs::canonicalize(&dir)?;
    spec.mounts = vec![format!("{}:/model", dir.display())];
    Ok(spec)
}

/// The model name the deployment in `slot` serves (its `/info`).
async fn model_name(slot: &ServerSlot) -> Result<String> {
    let (status, body) = slot.current().call("GET", "/info").await?;
    anyhow::ensure!(
        status == 200,
        "/info of the serving version answered {status}"
    );
    let info: edge_api::model::ModelInfo = serde_json::from_slice(&body)?;
    Ok(info.name)
}

/// Resolves when `up` stops every model or this one's own stop arrives (or is dropped).
pub async fn either(mut all: tokio::sync::watch::Receiver<bool>, own: oneshot::Receiver<()>) {
    tokio::select! {
        _ = all.wait_for(|stop| *stop) => {}
        _ = own => {}
    }
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let target = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &target)?;
        } else {
            std::fs::copy(e.path(), &target)
                .with_context(|| format!("copying {}", e.path().display()))?;
        }
    }
    Ok(())
}
