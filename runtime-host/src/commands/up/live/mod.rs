//! The models of `up --models DIR` while it runs: each added, upgraded or removed without
//! touching the others ([`super::watch`] finds the changes; the admin API asks too).
//!
//! - **Add**: compiled, self-tested, registered and bound like a model deployed at start-up,
//!   then routed on the app port.
//! - **Upgrade** (the component or the model directory changed): the new version is loaded
//!   beside the old one with the same stores and must pass its self-test; only then does it
//!   take the deployment's place (its `ServerSlot`): same port, same registration, and the old
//!   version's requests in flight finish on it. A version that fails never takes traffic:
//!   the old one keeps serving, and the reason is logged and kept ([`Live::list`]).
//! - **Remove**: no longer routed, then stopped like any deployment (requests in flight
//!   finish, the registration is given back).
//!
//! A model directory is served from a snapshot (a copy under the data directory), so the
//! files of a version do not change under it while the next one is being written.

mod entry;
mod pruning;

use crate::commands::up::deploy::{Adopted, Deployer, Ready, Skipped};
use crate::commands::up::started::either;
use crate::services::app::model_routes;
use crate::services::model::self_test::Tested;
use crate::services::model::spec::{ModelSpec, model_spec};
use crate::services::model::versions::{Fingerprint, fingerprint_blocking, snapshot_blocking};
use anyhow::{Context, Result};
use entry::Entry;
pub use entry::{Listed, Origin, Refused};
use host_core::http::router::AppRouter;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::{Mutex, oneshot};
use tokio::task::JoinHandle;

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

    /// The deployments the watched directory manages.
    pub async fn watched_names(&self) -> Vec<String> {
        let entries = self.entries.lock().await;
        entries
            .iter()
            .filter(|(_, e)| e.origin == Origin::Directory)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Every deployment, by name.
    pub async fn list(&self) -> Vec<Listed> {
        let entries = self.entries.lock().await;
        entries.iter().map(|(name, e)| e.listed(name)).collect()
    }

    pub async fn get(&self, name: &str) -> Option<Listed> {
        self.entries.lock().await.get(name).map(|e| e.listed(name))
    }

    /// Takes `spec` of the watched directory as it is now: adds it if new, upgrades it if
    /// its files changed since the version serving (and since a version refused).
    pub async fn ensure(self: &Arc<Self>, spec: ModelSpec, fingerprint: Fingerprint) {
        let name = spec.name.clone();
        // Decided and marked under one lock, so two scans never deploy the same model at once.
        let action = {
            let mut entries = self.entries.lock().await;
            match entries.get_mut(&name) {
                None => {
                    entries.insert(name.clone(), Entry::starting(&spec, Origin::Directory));
                    Some(Action::Add)
                }
                Some(e) if e.busy || e.origin != Origin::Directory => None,
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
        if let Some(action) = action {
            let _ = self.run(action, spec, fingerprint).await;
        }
    }

    /// Deploys `spec` (admin API): refused if its name is taken; waits until it serves.
    pub async fn deploy(self: &Arc<Self>, spec: ModelSpec) -> Result<Listed, Refused> {
        let name = spec.name.clone();
        {
            let mut entries = self.entries.lock().await;
            if entries.contains_key(&name) {
                return Err(Refused::Taken);
            }
            entries.insert(name.clone(), Entry::starting(&spec, Origin::Api));
        }
        let fingerprint = fingerprint_blocking(&spec.source).await;
        match self.run(Action::Add, spec, fingerprint).await {
            Ok(()) => self.get(&name).await.ok_or(Refused::Gone),
            Err(why) => {
                // A model the API could not start is not kept (its name is free again), nor
                // is what its start copied: nothing of it ever served.
                self.entries.lock().await.remove(&name);
                Err(Refused::Failed(why))
            }
        }
    }

    /// Records a model `up` was asked to run that did not start: listed as `failed` with
    /// why, tried again by a reload, or (from the watched directory) once its files change.
    pub async fn record_failure(self: &Arc<Self>, failed: Skipped, origin: Origin) {
        let fingerprint = fingerprint_blocking(&failed.source).await;
        let entry = Entry::failed(failed.source, origin, (fingerprint, failed.why));
        self.entries.lock().await.insert(failed.name.clone(), entry);
        // What its failed start copied goes (nothing of it serves).
        self.prune_later(&failed.name);
    }

    /// Loads `name`'s source again as a new version (admin API), whether or not its files
    /// changed: it takes over only if it passes its self-test. A model that failed to start
    /// is started again.
    pub async fn reload(self: &Arc<Self>, name: &str) -> Result<Listed, Refused> {
        let (source, action) = {
            let mut entries = self.entries.lock().await;
            let e = entries.get_mut(name).ok_or(Refused::Unknown)?;
            if e.busy {
                return Err(Refused::Busy);
            }
            e.busy = true;
            let action = match e.slot {
                Some(_) => Action::Upgrade,
                None => Action::Add,
            };
            (e.source.clone(), action)
        };
        let spec = model_spec(&source).map(|mut spec| {
            spec.name = name.to_owned();
            spec
        });
        let outcome = match spec {
            Ok(spec) => {
                let fingerprint = fingerprint_blocking(&spec.source).await;
                self.run(action, spec, fingerprint).await
            }
            Err(e) => {
                self.done(name, Err(format!("{e:#}")), Fingerprint::default())
                    .await
            }
        };
        match outcome {
            Ok(()) => self.get(name).await.ok_or(Refused::Gone),
            Err(why) => Err(Refused::Failed(why)),
        }
    }

    /// Runs a decided add or upgrade (the entry is marked busy) and records how it ended.
    async fn run(
        self: &Arc<Self>,
        action: Action,
        spec: ModelSpec,
        fingerprint: Fingerprint,
    ) -> Result<(), String> {
        let name = spec.name.clone();
        let outcome = match action {
            Action::Upgrade => self.upgrade(spec, fingerprint.clone()).await,
            Action::Add => self.add(spec, fingerprint.clone()).await,
        };
        self.done(&name, outcome.map_err(|e| format!("{e:#}")), fingerprint)
            .await
    }

    async fn done(
        self: &Arc<Self>,
        name: &str,
        outcome: Result<(), String>,
        fingerprint: Fingerprint,
    ) -> Result<(), String> {
        let mut entries = self.entries.lock().await;
        if let Some(entry) = entries.get_mut(name) {
            entry.busy = false;
            if let Err(why) = &outcome {
                tracing::error!(model = %name, error = %why, "new version refused; the deployment serving (if any) keeps serving");
                entry.rejected = Some((fingerprint, why.clone()));
            }
        }
        drop(entries);
        self.prune_later(name);
        outcome
    }

    /// Compiles `spec` (its model directory snapshotted) with its version. A version that
    /// fails to compile has its copy removed at once (unless some deployment serves it).
    async fn prepare(&self, spec: ModelSpec) -> Result<(Ready, String)> {
        let data_dir = &self.deployer.launcher.runtime().data_dir;
        let name = spec.name.clone();
        let (spec, version) = snapshot_blocking(spec, data_dir).await?;
        let prepared = match self.deployer.prepare(spec, &mut HashMap::new()).await {
            Ok(Ok(ready)) => Ok((ready, version.clone())),
            Ok(Err((_, why))) => Err(anyhow::anyhow!(why)),
            Err(e) => Err(e),
        };
        if prepared.is_err() {
            self.discard(&name, &version).await;
        }
        prepared
    }

    /// Records a deployment `up` started itself, so later changes upgrade or remove it.
    pub async fn adopt(&self, started: Adopted, addr: SocketAddr, origin: Origin) {
        let entry = Entry {
            slot: Some(started.slot),
            kv: Some(started.kv),
            version: started.version,
            fingerprint: fingerprint_blocking(&started.source).await,
            source: started.source,
            origin,
            addr: Some(addr),
            rejected: None,
            previous_version: None,
            stop: Some(started.stop),
            busy: false,
        };
        self.entries.lock().await.insert(started.name, entry);
    }

    async fn add(self: &Arc<Self>, spec: ModelSpec, fingerprint: Fingerprint) -> Result<()> {
        let name = spec.name.clone();
        let source = spec.source.clone();
        tracing::info!(model = %name, source = ?source, "new model found; deploying");
        // Every problem of the manifest at once, before anything is copied or compiled, and
        // before its store is made, so a refused model leaves nothing behind.
        spec.check()?;
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
                    e.addr = Some(addr);
                    e.slot = Some(slot.clone());
                    e.kv = Some(kv);
                    e.version = version.clone();
                    e.fingerprint = fingerprint;
                    e.stop = Some(own_stop);
                    e.rejected = None;
                } else {
                    // Removed while it started: stop it again.
                    let _ = own_stop.send(());
                    return Ok(());
                }
                for route in model_routes(&name) {
                    self.app.add(&route, &slot);
                }
                tracing::info!(model = %name, %version, %addr, "model deployed");
                Ok(())
            }
            // Not serving: the entry keeps no fingerprint and `done` records the refusal, so
            // the next scan tries again once the files change. Its copy goes now.
            Ok(Err(why)) => {
                self.discard(&name, &version).await;
                Err(anyhow::anyhow!(why))
            }
            Err(_) => Err(anyhow::anyhow!("the deployment stopped")),
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
        // Every problem of the manifest at once, before anything is copied or compiled.
        spec.check()?;
        let (ready, version) = self.prepare(spec).await?;
        let loaded = self.deployer.load(&ready, &name, kv, &version)?;
        let opts = self.deployer.options(&name, &version);
        let taken = match Tested::of(loaded, self.deployer.self_test_deadline).await {
            Ok(tested) => tested.take_over(&slot, &opts, &source).await,
            Err(e) => Err(e),
        };
        if let Err(e) = taken {
            self.discard(&name, &version).await;
            return Err(e);
        }
        let mut entries = self.entries.lock().await;
        if let Some(e) = entries.get_mut(&name) {
            let previous = std::mem::replace(&mut e.version, version.clone());
            e.previous_version = Some(previous);
            e.fingerprint = fingerprint;
            e.rejected = None;
        }
        tracing::info!(model = %name, %version, "upgraded: the new version takes the traffic, the old one drains");
        Ok(())
    }

    /// Stops routing `name`, then stops it (requests in flight finish; it unregisters);
    /// `false` if there is no such deployment.
    pub async fn remove(self: &Arc<Self>, name: &str) -> bool {
        let Some(mut entry) = self.entries.lock().await.remove(name) else {
            return false;
        };
        for route in model_routes(name) {
            self.app.remove(&route);
        }
        if let Some(stop) = entry.stop.take() {
            let _ = stop.send(());
        }
        tracing::info!(model = %name, "model removed; stopping it");
        // Its snapshots go once its requests in flight have finished (unless a model of
        // that name was deployed again meanwhile).
        self.prune_later(name);
        true
    }
}
