//! Stopping during start-up, the one way it is done everywhere: each long step of a start
//! (compiling a component, a model's self-test, a registration) races the stop it was given
//! ([`unless`]), and a stop that wins is the error [`Stopped`]. The command whose start it
//! was takes that for an orderly stop, not a failure ([`is_stopped`]): it stops what it
//! started so far and exits 0.
//!
//! The stop is usually the process's signal ([`crate::signals::wait`]); a deployment `up`
//! may remove on its own gets a stop of its own.

use std::future::Future;

/// A stop came before the work it raced finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped during start-up")
    }
}

impl std::error::Error for Stopped {}

/// Runs `work` unless `stop` resolves first (a stop already given wins at once).
pub async fn unless<T>(
    stop: impl Future<Output = ()>,
    work: impl Future<Output = T>,
) -> Result<T, Stopped> {
    tokio::select! {
        biased;
        _ = stop => Err(Stopped),
        done = work => Ok(done),
    }
}

/// Whether `error` is a [`Stopped`] (or was caused by one).
pub fn is_stopped(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| cause.is::<Stopped>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stop_given_first_wins_and_is_recognised_through_context() {
        assert_eq!(unless(std::future::pending(), async { 7 }).await, Ok(7));
        let stopped = unless(async {}, std::future::pending::<()>()).await;
        assert_eq!(stopped, Err(Stopped));
        let error = anyhow::Error::from(Stopped).context("loading molprop");
        assert!(is_stopped(&error));
        assert!(!is_stopped(&anyhow::anyhow!("stopped during start-up")));
    }
}
