//! The registry's hook: each state-changing request reaches the component with
//! [`HEADER`](registry_core::caller::HEADER) saying who sent it and, when the body names a
//! `process_id`, what that process is on this machine and which user is registering it.

use crate::services::caller::identify::{Relatives, claimed, identify, user};
use bytes::Bytes;
use host_core::http::connection::ConnInfo;
use host_core::http::hooks::{Hook, HookWork};
use http_body_util::{BodyExt, Full};
use registry_core::caller::{Caller, HEADER, Identity};

/// Tells the registry component who calls, vouched for by `token` (the component's
/// `registry_maintenance_token`).
pub struct CallerHook {
    token: String,
}

impl CallerHook {
    pub fn new(token: String) -> Self {
        Self { token }
    }
}

impl Hook for CallerHook {
    fn before_guest<'a>(
        &'a self,
        req: &'a mut hyper::Request<Full<Bytes>>,
    ) -> Option<HookWork<'a>> {
        if matches!(*req.method(), hyper::Method::GET | hyper::Method::HEAD) {
            return None;
        }
        Some(Box::pin(identify_caller(req, &self.token)))
    }
}

/// Adds [`HEADER`] to a state-changing request: who sent it and, when the body names a
/// `process_id`, what that process is on this machine.
async fn identify_caller(req: &mut hyper::Request<Full<Bytes>>, token: &str) {
    let Some(conn) = req.extensions().get::<ConnInfo>().cloned() else {
        return; // the host's own in-process call
    };
    // What the body names: the process a registration is for, or (a renewal) its id.
    #[derive(serde::Deserialize, Default)]
    struct Claim {
        process_id: Option<u64>,
        registration_id: Option<serde::de::IgnoredAny>,
    }
    let body = req.body().clone().collect().await.map(|b| b.to_bytes());
    let claim: Claim = body
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let wanted = match (req.method(), claim.process_id, &claim.registration_id) {
        // A renewal without its id (`POST /heartbeat/{port}`, which names no process), which
        // a relative of the registered process may send.
        (&hyper::Method::POST, None, None) => Relatives::All,
        (_, pid, _) => Relatives::Line {
            claimed: pid.and_then(|p| u32::try_from(p).ok()),
        },
    };
    let claimed_pid = claim.process_id;
    let found = tokio::task::spawn_blocking(move || {
        let caller = identify(&conn, wanted);
        // Whose registration it is, asked only of a registration (the per-user cap). The
        // host's own models (`up` registers them from this process) are the operator's
        // choice, bounded by the per-process cap and `--copies`; the per-user cap is for
        // every other process of the machine.
        let own = matches!(&caller, Caller::Local { related } if related.first() == Some(&std::process::id()));
        let user = claimed_pid.filter(|_| !own).and_then(|_| user(&conn));
        (caller, claimed_pid.map(claimed), user)
    })
    .await;
    let (caller, claimed, user) = found.unwrap_or((Caller::Unknown, None, None));
    let value = Identity {
        caller,
        claimed,
        user,
    }
    .header_value(token);
    if let Ok(v) = hyper::header::HeaderValue::from_str(&value) {
        req.headers_mut().insert(HEADER, v);
    }
}
