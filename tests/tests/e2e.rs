//! Every end-to-end scenario, in one test binary, grouped by subject: a new test goes in the
//! group below that names what it tests, as a module of its own (a file, or a folder with a
//! `mod.rs` once it grows) declared in that group's `mod.rs`.
//!
//! One binary instead of one per module: each binary compiled and linked its own copy of the
//! harness's generic code (the HTTP client, tokio, serde), about 14 s of CPU apiece in a cold
//! release build. `cargo xtask test` still runs each module (`group::module`) as a process of
//! its own, several at a time (its runner lists the tests and groups them by those two names),
//! so a scenario's servers, static state and timing are as separate as before. By hand:
//! `cargo test --release -p e2e-tests --test e2e -- chat::api::` runs one module, `chat::` a
//! group. The harness the modules share is the `e2e_tests` library (tests/src).

/// The chat service (interface A) over HTTP: its API, its data over time, hostile writers, replies.
mod chat;
/// The web console on `up`'s app port, in a real headless browser.
mod console;
/// Several hosts on one Redis behind HAProxy, and the fleet's shipped files.
mod fleet;
/// `runtime-host` whatever the component: limits, services, compilation, metrics, stores, `up`.
mod host;
/// Interface B and each model component, the protocols every model speaks, `runtime-host model`.
mod models;
/// The registry service (interface C) over HTTP: ports, leases, who owns a registration.
mod registry;
/// The project under the real Spin and on Spin's stores, and the SpinKube manifest.
mod spin;
/// The commands beside serving (`check`, `predict`, `init`, the bench) and the OpenAPI documents.
mod tools;
