//! Telling systemd how a service stands (`Type=notify` units): `READY=1` once every service
//! of `runtime-host up` answers, `STOPPING=1` when a stop begins. Outside systemd (no
//! `NOTIFY_SOCKET`) each call does nothing.
//!
//! Why: with `Type=notify`, `systemctl start` returns, and units ordered after this one
//! start, only once the host serves, not when its process exists; a load balancer's health
//! checks then find it ready. `docs/deploy.md` has the unit.

use sd_notify::NotifyState;

/// Every service answers.
pub fn ready() {
    send(&[NotifyState::Ready, NotifyState::Status("serving")]);
}

/// A stop has begun: requests in flight finish, models unregister.
pub fn stopping() {
    send(&[NotifyState::Stopping, NotifyState::Status("stopping")]);
}

fn send(states: &[NotifyState]) {
    if let Err(e) = sd_notify::notify(false, states) {
        tracing::warn!("could not tell systemd (NOTIFY_SOCKET) how the host stands: {e}");
    }
}
