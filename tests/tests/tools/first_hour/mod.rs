//! A newcomer's first hour (issue 46): what a new user ran into following the README, each
//! tried as they did it. Start-up never drops a model ([`startup`]); every answer has the
//! right flags ([`ranges`]); bringing a model is quick ([`own_model`]), its manifest written
//! and checked like a deploy ([`init_and_check`]), and one that cannot serve says why
//! ([`deploy_errors`]); mistakes get the message that helps ([`mistakes`]).

mod deploy_errors;
mod init_and_check;
mod mistakes;
mod own_model;
mod ranges;
mod startup;

use e2e_tests::{Client, Stack};
use std::time::{Duration, Instant};

/// Waits until the model `name` deployed by `stack` answers `/health` with 200 (a model
/// directory moved into the watched `--models`).
async fn wait_until_healthy(c: &Client, stack: &Stack, name: &str) {
    let started = Instant::now();
    let url = stack.app(&format!("/models/{name}/health"));
    while c.get(&url).await.status != 200 {
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "{name} deployed within 180 s:\n{}",
            stack.log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
