//! Wire types shared by every part of the project: the WebAssembly components, the native
//! host, and the end-to-end tests.
//!
//! One definition per resource of the specification (v1.2), so a field renamed here is
//! renamed everywhere. The crate is plain Rust (serde only) and compiles both for
//! `wasm32-wasip2` and natively.

pub mod chat;
pub mod embedding;
pub mod error;
pub mod json;
pub mod kv_lock;
pub mod language_model;
pub mod model;
pub mod registry;
pub mod routes;
pub mod time;

pub use error::{ApiError, ErrorBody, ErrorCode};
