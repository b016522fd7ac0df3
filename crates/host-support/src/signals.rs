//! SIGINT and SIGTERM, from the first instant of the process to the last.
//!
//! The handlers are installed before any other work ([`install`], first thing in `main`), so
//! a Ctrl-C during start-up (a component compiling, a model's self-test, a registration) is
//! never lost and never kills the process half-way: start-up code races each long step
//! against [`wait`] ([`crate::stop::unless`]) and stops in order what it started so far.
//! Installing a handler also replaces an inherited "ignore" disposition (shells ignore SIGINT
//! for background jobs), so a script's Ctrl-C reaches us too.
//!
//! A second signal while the orderly stop runs ends the process at once (status 130), for a
//! stop that hangs.

use std::sync::OnceLock;
use tokio::sync::watch;

static STOP: OnceLock<watch::Sender<bool>> = OnceLock::new();

fn sender() -> &'static watch::Sender<bool> {
    STOP.get_or_init(|| watch::channel(false).0)
}

/// Starts listening for SIGINT and SIGTERM (on the current Tokio runtime).
pub fn install() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        tokio::spawn(async move {
            let mut seen = 0;
            loop {
                tokio::select! {
                    _ = int.recv() => {},
                    _ = term.recv() => {},
                }
                seen += 1;
                if seen > 1 {
                    crate::log_writer::flush();
                    eprintln!("second stop signal: exiting without finishing the orderly stop");
                    std::process::exit(130);
                }
                tracing::info!("shutdown requested");
                sender().send_replace(true);
            }
        });
    }
    #[cfg(not(unix))]
    tokio::spawn(async {
        if tokio::signal::ctrl_c().await.is_ok() {
            sender().send_replace(true);
        }
    });
    Ok(())
}

/// Resolves once a stop signal has arrived (at once if one already has).
pub async fn wait() {
    let mut rx = sender().subscribe();
    let _ = rx.wait_for(|stop| *stop).await;
}

/// Asks for the same orderly stop a signal would (tests, and `POST /shutdown`-like paths).
#[cfg(test)]
pub fn request() {
    sender().send_replace(true);
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn a_stop_requested_before_waiting_is_seen() {
        use crate::stop::{Stopped, unless};
        assert_eq!(unless(super::wait(), async { 7 }).await, Ok(7));
        super::request();
        super::wait().await;
        let stopped = unless(super::wait(), std::future::pending::<()>()).await;
        assert_eq!(stopped, Err(Stopped));
    }
}
