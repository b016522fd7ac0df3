//! The live set: the models of `up --models DIR` while it runs, each added, upgraded or
//! removed without touching the others ([`super::watcher`] finds the changes; the admin API
//! asks too).
//!
//! - **Add**: compiled, self-tested, registered and bound like a model deployed at start-up,
//!   then routed on the app port.
//! - **Upgrade** (the component or the model directory changed): the new version is loaded
//!   beside the old one with the same stores and must pass its self-test; only then does it
//!   take the deployment's place (its `ServerSlot`): same port, same registration, and the old
//!   version's requests in flight finish on it. A version that fails never takes traffic:
//!   the old one keeps serving, and the reason is logged and kept ([`LiveSet::list`]).
//! - **Remove**: no longer routed, then stopped like any deployment (requests in flight
//!   finish, the registration is given back).
//!
//! A model directory is served from a snapshot (a copy under the data directory), so the
//! files of a version do not change under it while the next one is being written.

mod entry;
mod keeping;
mod pruning;

use crate::services::app::model_routes;
use crate::services::deployments::at_start::{AdoptedModel, LeftOutModel};
use crate::services::deployments::deployer::{CodeCache, CompiledModel, Deployer};
use crate::services::deployments::tasks::DeploymentTasks;
use crate::services::model::self_test::SelfTestPass;
use crate::services::model::spec::{ModelSpec, model_spec};
use crate::services::model::versions::{Fingerprint, fingerprint_blocking, snapshot_blocking};
use anyhow::{Context, Result};
use entry::{Action, Entry, Placement, Refusal, State};
pub use entry::{Listing, Origin, Refused, Status};
use host_core::http::router::AppRouter;
use std::collections::{BTreeMap, HashSet};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::Mutex;

/// The deployments the stack manages while it runs, by name.
pub struct LiveSet {
    deployer: Deployer,
    app: Arc<AppRouter>,
    /// Every deployment task (awaited when the stack stops) and the stack's stop of them.
    tasks: DeploymentTasks,
    entries: Mutex<BTreeMap<String, Entry>>,
    /// Held while the admin API's deployments are written ([`keeping`]).
    keeping: Mutex<()>,
    /// The names the admin API deployed or undeployed in this run: the list on disk's
    /// entries of other names are written back as they were ([`keeping`]).
    owned: Mutex<HashSet<String>>,
}

impl LiveSet {
    pub fn new(deployer: Deployer, app: Arc<AppRouter>, tasks: DeploymentTasks) -> Arc<Self> {
        Arc::new(Self {
            deployer,
            app,
            tasks,
            entries: Mutex::new(BTreeMap::new()),
            keeping: Mutex::new(()),
            owned: Mutex::new(HashSet::new()),
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
    pub async fn list(&self) -> Vec<Listing> {
        let entries = self.entries.lock().await;
        entries.iter().map(|(name, e)| e.listed(name)).collect()
    }

    /// Every deployment whose last start failed, with why.
    pub async fn failed(&self) -> Vec<(String, String)> {
        let entries = self.entries.lock().await;
        let failed = entries.iter().filter_map(|(name, e)| match &e.state {
            State::Failed { why } => Some((name.clone(), why.clone())),
            _ => None,
        });
        failed.collect()
    }

    pub async fn get(&self, name: &str) -> Option<Listing> {
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
                Some(e) if e.state.is_busy() || e.origin != Origin::Directory => None,
                Some(e)
                    if e.fingerprint == fingerprint
                        || e.refused.as_ref().is_some_and(|r| r.files == fingerprint) =>
                {
                    None
                }
                // New files: upgraded if it serves, started again if its last start failed.
                Some(e) => e.claim(),
            }
        };
        if let Some(action) = action {
            let _ = self.run(action, spec, fingerprint).await;
        }
    }

    /// Deploys `spec` (admin API): refused if its name is taken; waits until it serves.
    pub async fn deploy(self: &Arc<Self>, spec: ModelSpec) -> Result<Listing, Refused> {
        let name = spec.name.clone();
        {
            let mut entries = self.entries.lock().await;
            if entries.contains_key(&name) {
                return Err(Refused::Taken);
            }
            entries.insert(name.clone(), Entry::starting(&spec, Origin::Api));
        }
        let fingerprint = fingerprint_blocking(&spec.source).await;
        let outcome = match self.run(Action::Add, spec, fingerprint).await {
            Ok(()) => self.get(&name).await.ok_or(Refused::Gone),
            Err(why) => {
                // A model the API could not start is not kept (its name is free again), nor
                // is what its start copied: nothing of it ever served.
                self.entries.lock().await.remove(&name);
                Err(Refused::Failed(why))
            }
        };
        self.keep_api_deployments().await;
        outcome
    }

    /// Records a model `up` was asked to run that did not start: listed as `failed` with
    /// why, tried again by a reload, or (from the watched directory) once its files change.
    pub async fn record_failure(self: &Arc<Self>, failed: LeftOutModel) {
        let files = fingerprint_blocking(&failed.source).await;
        let refusal = Refusal {
            files,
            why: failed.why,
        };
        let entry = Entry::failed(failed.source, failed.origin, refusal);
        self.entries.lock().await.insert(failed.name.clone(), entry);
        // What its failed start copied goes (nothing of it serves).
        self.prune_later(&failed.name);
    }

    /// Loads `name`'s source again as a new version (admin API), whether or not its files
    /// changed: it takes over only if it passes its self-test. A model that failed to start
    /// is started again.
    pub async fn reload(self: &Arc<Self>, name: &str) -> Result<Listing, Refused> {
        let (source, action, origin) = {
            let mut entries = self.entries.lock().await;
            let e = entries.get_mut(name).ok_or(Refused::Unknown)?;
            let action = e.claim().ok_or(Refused::Busy)?;
            (e.source.clone(), action, e.origin)
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
        // A new version of an admin API deployment is the one to come back.
        if origin == Origin::Api {
            self.keep_api_deployments().await;
        }
        match outcome {
            Ok(()) => self.get(name).await.ok_or(Refused::Gone),
            Err(why) => Err(Refused::Failed(why)),
        }
    }

    /// Runs a claimed add or upgrade and records how it ended.
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
            let refusal = outcome.as_ref().err().map(|why| {
                tracing::error!(model = %name, error = %why, "new version refused; the deployment serving (if any) keeps serving");
                Refusal {
                    files: fingerprint,
                    why: why.clone(),
                }
            });
            entry.settle(refusal);
        }
        drop(entries);
        self.prune_later(name);
        outcome
    }

    /// Snapshots `spec`'s files as a new version and compiles it. A version that fails to
    /// compile has its copy removed at once (unless some deployment serves it).
    async fn compile_version(&self, spec: ModelSpec) -> Result<(CompiledModel, String)> {
        let data_dir = &self.deployer.launcher.runtime().data_dir;
        let name = spec.name.clone();
        let (spec, version) = snapshot_blocking(spec, data_dir).await?;
        let compiled = self.deployer.compile(spec, &mut CodeCache::new()).await;
        match compiled {
            Ok(model) => Ok((model, version)),
            Err(e) => {
                self.discard(&name, &version).await;
                Err(e.into())
            }
        }
    }

    /// Records a deployment the stack started itself, so later changes upgrade or remove it.
    pub async fn adopt(&self, started: AdoptedModel, addr: SocketAddr) {
        let running = Placement {
            slot: started.slot,
            kv: started.kv,
            addr,
            stop: started.stop,
        };
        let entry = Entry {
            state: State::Serving(running),
            version: started.version,
            fingerprint: fingerprint_blocking(&started.source).await,
            source: started.source,
            origin: started.origin,
            refused: None,
            previous_version: None,
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
        let kv = self.deployer.model_store(&name)?;
        let (model, version) = self.compile_version(spec).await?;
        let (own_stop, stop) = self.tasks.own_stop();
        let (starting, task) =
            self.deployer
                .start(&model, name.clone(), kv.clone(), &version, stop)?;
        self.tasks.push(task);
        let slot = starting.slot.clone();
        match starting.outcome.await {
            Ok(Ok(addr)) => {
                if let Some(e) = self.entries.lock().await.get_mut(&name) {
                    e.state = State::Serving(Placement {
                        slot: slot.clone(),
                        kv,
                        addr,
                        stop: own_stop,
                    });
                    e.version = version.clone();
                    e.fingerprint = fingerprint;
                    e.refused = None;
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
            // Not serving: the entry keeps no fingerprint and `done` records the failure, so
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
            let running = e.state.running().context("still starting")?;
            (running.slot.clone(), running.kv.clone())
        };
        tracing::info!(model = %name, "model changed; loading the new version beside the serving one");
        let source = spec.source.clone();
        // Every problem of the manifest at once, before anything is copied or compiled.
        spec.check()?;
        let (model, version) = self.compile_version(spec).await?;
        let loaded = self.deployer.load(&model, &name, kv, &version)?;
        let opts = self.deployer.options(&name, &version);
        let taken = match SelfTestPass::of(loaded, self.deployer.self_test_deadline).await {
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
            e.refused = None;
        }
        tracing::info!(model = %name, %version, "upgraded: the new version takes the traffic, the old one drains");
        Ok(())
    }

    /// Stops routing `name`, then stops it (requests in flight finish; it unregisters);
    /// `false` if there is no such deployment. One the admin API kept from an earlier run
    /// that this run does not deploy leaves the list kept.
    pub async fn remove(self: &Arc<Self>, name: &str) -> bool {
        let Some(entry) = self.entries.lock().await.remove(name) else {
            return self.forget_kept(name).await;
        };
        for route in model_routes(name) {
            self.app.remove(&route);
        }
        if let State::Serving(running) | State::Upgrading(running) = entry.state {
            let _ = running.stop.send(());
        }
        tracing::info!(model = %name, "model removed; stopping it");
        if entry.origin == Origin::Api {
            self.keep_api_deployments().await;
        }
        // Its snapshots go once its requests in flight have finished (unless a model of
        // that name was deployed again meanwhile).
        self.prune_later(name);
        true
    }
}
