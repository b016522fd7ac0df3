//! What `runtime-host` takes to serve WebAssembly components over HTTP, and nothing of
//! what a deployment is or which commands exist: the layers below its services, lowest
//! first, each a crate of its own so that Cargo itself refuses an import that points up
//! (a crate can only name the crates it depends on, and Cargo refuses a cycle):
//!
//! 1. [`support`] (`host-support`): process plumbing (signals and stopping, the log writer,
//!    the request log, the heap, tokens, the hostname, systemd, durations on the command line);
//! 2. [`metrics`] (`host-metrics`): process-wide Prometheus counters, no HTTP;
//! 3. [`capabilities`] (`host-capabilities`): what a component may import beside WASI, one
//!    module each as Spin's factors are (key-value, variables, file mounts, outbound HTTP, the
//!    LLM interface, their bindings);
//! 4. [`runtime`] (`host-runtime`): running a component (engine, linking, the compiled
//!    cache, snapshots, an instance's state and limits, and the flags that set them);
//! 5. [`http`] (`host-http`): serving HTTP to components (listener, guard, header names,
//!    responses, the router, slots, one component's server with its warm instances and hooks).
//!
//! This crate only names them, so the services see one library under the names the layers
//! had when they were modules. docs/ARCHITECTURE.md draws the whole.

pub use host_capabilities as capabilities;
pub use host_http as http;
pub use host_metrics as metrics;
pub use host_runtime as runtime;
pub use host_support as support;
