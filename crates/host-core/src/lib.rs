//! What `runtime-host` takes to serve WebAssembly components over HTTP, and nothing of
//! what a deployment is or which commands exist: the layers below its services, lowest
//! first. A module imports only from its own layer or the ones below, never up and never
//! in a circle (`cargo xtask layers` checks it in every test run):
//!
//! 1. [`support`]: process plumbing (signals and stopping, the log writer, the request log,
//!    the heap, tokens, the hostname, durations on the command line);
//! 2. [`metrics`]: process-wide Prometheus counters, no HTTP;
//! 3. [`capabilities`]: what a component may import beside WASI, one module each as Spin's
//!    factors are (key-value, variables, file mounts, the LLM interface, their bindings);
//! 4. [`runtime`]: running a component (engine, linking, the compiled cache, snapshots, an
//!    instance's state and limits, and the flags that set them);
//! 5. [`http`]: serving HTTP to components (listener, guard, header names, responses, the
//!    router, slots, one component's server with its warm instances and hooks).
//!
//! The services (what a deployment is) and the commands are the `runtime-host` crate's, so
//! Cargo keeps anything here from reaching them. docs/ARCHITECTURE.md draws the whole.

pub mod support;

pub mod metrics;

pub mod capabilities;

pub mod runtime;

pub mod http;
