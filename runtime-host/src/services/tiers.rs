//! Tiered compilation: a component whose optimized code the cache lacks is served at once
//! from Winch's baseline code, while Cranelift compiles it (and pre-initializes it, where it
//! has a snapshot) in the background. When that code is ready, every server of the component
//! makes its new instances from it, and its warm instances of the baseline drain
//! (`InstancePool::replace_code`), as an upgrade's old version drains.
//!
//! Why: Cranelift takes 5-7 s for the 8.4 MB ONNX component on a quiet 2-core machine and
//! 12-25 s on a busy one, and a new model waited that long for its first answer. Winch
//! compiles in a fraction of that; its code runs slower, for as long as Cranelift takes.
//! Both are cached (under each engine's settings), so a restart serves optimized code at
//! once. A component Winch cannot compile is served once Cranelift has compiled it, as
//! before, and the log says why.

use crate::services::launch::{Launch, Launcher};
use anyhow::Result;
use host_core::http::hooks::Hook;
use host_core::http::server::ComponentServer;
use host_core::runtime::preinit::Source;
use host_core::runtime::state::{Grants, InstanceState};
use host_core::support::{signals, stop};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;
use wasmtime_wasi_http::p2::bindings::ProxyPre;

/// Optimized compiles in the background, one at a time per process.
static OPTIMIZING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

/// Where the optimized code of a component served from baseline code arrives.
pub type OptimizedCodeSender = watch::Sender<Option<ProxyPre<InstanceState>>>;

/// A component's code to serve now; if that is baseline code, the optimized code to come.
#[derive(Clone)]
pub struct CodeTiers {
    pub pre: ProxyPre<InstanceState>,
    /// `pre` is Winch's code.
    baseline: bool,
    /// Where Cranelift's code arrives, for baseline code that is to move to it.
    optimized: Option<watch::Receiver<Option<ProxyPre<InstanceState>>>>,
}

impl CodeTiers {
    /// Optimized code: nothing follows.
    pub fn optimized(pre: ProxyPre<InstanceState>) -> Self {
        Self {
            pre,
            baseline: false,
            optimized: None,
        }
    }

    /// Baseline code that stays (`--baseline-only`, for measuring what it costs).
    pub fn baseline_only(pre: ProxyPre<InstanceState>) -> Self {
        Self {
            pre,
            baseline: true,
            optimized: None,
        }
    }

    /// Baseline code, and where its optimized code is to be sent. Dropping the sender
    /// unsent leaves the servers on the baseline code.
    pub fn baseline(pre: ProxyPre<InstanceState>) -> (Self, OptimizedCodeSender) {
        let (sender, receiver) = watch::channel(None);
        let code = Self {
            pre,
            baseline: true,
            optimized: Some(receiver),
        };
        (code, sender)
    }

    /// Whether this is baseline code (its optimized code may have arrived since).
    pub fn is_baseline(&self) -> bool {
        self.baseline
    }

    /// Moves `server`, made from this code, to the optimized code once it is ready (at once
    /// if it is); nothing for optimized code. Ends quietly if the server is gone by then.
    pub fn follow(&self, server: &Arc<ComponentServer>, deployment: &str) {
        let Some(mut optimized) = self.optimized.clone() else {
            return;
        };
        let server = Arc::downgrade(server);
        let deployment = deployment.to_owned();
        tokio::spawn(async move {
            let pre = tokio::select! {
                arrived = optimized.wait_for(Option::is_some) => match arrived {
                    Ok(pre) => pre.clone(),
                    // Its compile failed (and said why) or the process is stopping.
                    Err(_) => return,
                },
                // The server went (its model removed or upgraded): this receiver goes too,
                // so a compile nothing waits for any more is stopped.
                () = gone(&server) => return,
            };
            let (Some(pre), Some(server)) = (pre, server.upgrade()) else {
                return;
            };
            server.replace_code(pre);
            tracing::info!(
                %deployment,
                "optimized code in place: new instances run Cranelift's code, the baseline's drain"
            );
        });
    }
}

/// Says that the optimized compile of the component at `path` ended unfinished.
fn compile_stopped(path: &std::path::Path) {
    tracing::info!(
        component = %path.display(),
        "optimized compile stopped: nothing serves this component any more"
    );
}

/// Returns once `server` is gone (checked every half second).
async fn gone(server: &std::sync::Weak<ComponentServer>) {
    while server.strong_count() > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

impl Launcher {
    /// The component of `source`, as [`Launcher::load_source`] makes it, or, where the
    /// cache lacks its optimized code, compiled by Winch at once and optimized in the
    /// background ([`crate::services::tiers`]).
    pub async fn load_code(&self, source: Source, grants: &Grants) -> Result<CodeTiers> {
        let source = match self.baseline_engine() {
            Some(baseline) if self.runtime().baseline_only => {
                let compiling = source.compile_plain(baseline, self.cache_dir());
                let pre = stop::unless(signals::wait(), compiling).await??;
                return Ok(CodeTiers::baseline_only(pre));
            }
            Some(baseline) => {
                let (engine, cache_dir) = (self.engine().clone(), self.cache_dir().to_owned());
                let (source, compiled) = tokio::task::spawn_blocking(move || {
                    let mut source = source;
                    let compiled = source.is_compiled(&engine, &cache_dir);
                    (source, compiled)
                })
                .await?;
                match compiled {
                    true => source,
                    false => match self.start_on_baseline(baseline, source, grants).await? {
                        Ok(code) => return Ok(code),
                        Err(refused) => refused,
                    },
                }
            }
            None => source,
        };
        Ok(CodeTiers::optimized(
            self.load_source(source, grants).await?,
        ))
    }

    /// `source` compiled by Winch, its optimized code compiling in the background; the
    /// source back if Winch refuses it (said in the log), for Cranelift to compile first.
    async fn start_on_baseline(
        &self,
        baseline: &wasmtime::Engine,
        source: Source,
        grants: &Grants,
    ) -> Result<Result<CodeTiers, Source>> {
        let started = Instant::now();
        let path = source.path().to_owned();
        let compiling = source.compile_plain(baseline, self.cache_dir());
        let pre = match stop::unless(signals::wait(), compiling).await? {
            Ok(pre) => pre,
            Err(e) => {
                tracing::warn!(
                    component = %path.display(),
                    "Winch could not compile it ({e:#}): it serves once Cranelift has"
                );
                return Ok(Err(source));
            }
        };
        tracing::info!(
            component = %path.display(),
            load_ms = started.elapsed().as_millis() as u64,
            "component compiled by Winch (baseline code); Cranelift's follows in the background"
        );
        let (code, optimized) = CodeTiers::baseline(pre);
        let (launcher, grants) = (self.clone(), grants.clone());
        tokio::spawn(async move {
            // One at a time: the deployments serving meanwhile (and their self-tests) keep
            // the other cores, as when every component was compiled before any started.
            let _turn = OPTIMIZING.acquire().await;
            if optimized.is_closed() {
                compile_stopped(&path);
                return;
            }
            let compiled = tokio::select! {
                compiled = launcher.load_source(source, &grants) => compiled,
                // Nothing serves this code any more (its model was removed): the compile,
                // in a child process killed with its future, stops.
                () = optimized.closed() => {
                    compile_stopped(&path);
                    return;
                }
            };
            match compiled {
                Ok(pre) => {
                    let _ = optimized.send(Some(pre));
                }
                Err(e) if stop::is_stopped(&e) => {}
                Err(e) => tracing::warn!(
                    component = %path.display(),
                    "compiling the optimized code failed: {e:#}; it keeps serving Winch's code"
                ),
            }
        });
        Ok(Ok(code))
    }

    /// Compiles `component` with Winch into the cache in the background, unless the cache
    /// has it already or this host serves optimized code only. For the ONNX component that
    /// every model directory runs: the first directory dropped into `up --models` (or
    /// deployed through the admin API) then loads that code from the cache instead of
    /// compiling the 8.7 MB component (2.2 s and more on two cores).
    pub fn cache_baseline_code(&self, component: std::path::PathBuf) {
        let Some(baseline) = self.baseline_engine().cloned() else {
            return;
        };
        let cache_dir = self.cache_dir().to_owned();
        tokio::spawn(async move {
            let started = Instant::now();
            let compiled = async {
                let source = Source::read(&component, &Default::default())?;
                source.compile_plain(&baseline, &cache_dir).await
            };
            match stop::unless(signals::wait(), compiled).await {
                Ok(Ok(_)) => tracing::info!(
                    component = %component.display(),
                    ms = started.elapsed().as_millis() as u64,
                    "baseline code cached: new model directories start without compiling it"
                ),
                Ok(Err(e)) => tracing::warn!(
                    component = %component.display(),
                    "could not cache its baseline code ({e:#}); the first model using it compiles it"
                ),
                Err(_) => {} // stopping
            }
        });
    }

    /// [`Launcher::server`] of `code`, moved to its optimized code once that is ready.
    pub fn server_of(
        &self,
        name: &str,
        code: &CodeTiers,
        grants: Grants,
        hooks: Vec<Arc<dyn Hook>>,
    ) -> Launch {
        let loaded = self.server(name, code.pre.clone(), grants, hooks);
        if code.is_baseline() {
            loaded.server.mark_baseline();
            code.follow(&loaded.server, name);
        }
        loaded
    }
}
