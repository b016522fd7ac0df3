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

use host_core::http::server::ComponentServer;
use host_core::runtime::state::InstanceState;
use std::sync::Arc;
use tokio::sync::watch;
use wasmtime_wasi_http::p2::bindings::ProxyPre;

/// Where the optimized code of a component served from baseline code arrives.
pub type Optimizing = watch::Sender<Option<ProxyPre<InstanceState>>>;

/// A component's code to serve now; if that is baseline code, the optimized code to come.
#[derive(Clone)]
pub struct Code {
    pub pre: ProxyPre<InstanceState>,
    /// `pre` is Winch's code.
    baseline: bool,
    /// Where Cranelift's code arrives, for baseline code that is to move to it.
    optimized: Option<watch::Receiver<Option<ProxyPre<InstanceState>>>>,
}

impl Code {
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
    pub fn baseline(pre: ProxyPre<InstanceState>) -> (Self, Optimizing) {
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
            let pre = match optimized.wait_for(Option::is_some).await {
                Ok(pre) => pre.clone(),
                Err(_) => {
                    tracing::warn!(
                        %deployment,
                        "no optimized code came (see above): it keeps serving the baseline code"
                    );
                    return;
                }
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
