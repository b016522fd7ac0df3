//! Plumbing shared by every WebAssembly component, written once.
//!
//! A component's handler sees a fully read [`ApiRequest`] and returns `Result<Response,
//! ApiError>`; [`serve`] does the rest: it caps and reads the body, turns every error into the
//! JSON error body with the right status, and never lets a component answer a bare 500.
//! Everything here imports only what Spin provides (`wasi:http`, `wasi:keyvalue`,
//! `wasi:config`), so a component runs the same under `spin up` and `runtime-host`.
//! Linking it also installs the components' allocator ([`small_blocks`]).

pub mod config;
pub mod fetch;
pub mod http;
pub mod kv;
pub mod small_blocks;

pub use edge_api::error::{ApiError, ErrorCode};
pub use http::{ApiRequest, Response, ResponseOutparam, respond, serve};
