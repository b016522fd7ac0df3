//! The key-value stores behind `runtime-host`'s `wasi:keyvalue`, apart from the WebAssembly
//! binding (which stays in the host, `crates/host-capabilities/src/keyvalue/`), as
//! Spin keeps its `key-value-sqlite` and `key-value-redis` apart from `factor-key-value`.
//!
//! The seam is the [`store::Store`] trait: [`sqlite`] (the embedded default: Spin's table
//! layout, group commit) and [`redis`] (shared by several hosts) implement it; [`wrap`] and
//! [`turns`] wrap any store; [`open`] opens one per label of Spin's runtime-config file
//! ([`config`]). A new backend is one module implementing `Store`, one arm in `open.rs`,
//! and one call of the contract suite (`contract.rs`) that every store passes.

pub mod config;
#[cfg(test)]
mod contract;
pub mod memory;
pub mod open;
pub mod redis;
pub mod sqlite;
pub mod store;
mod turns;
pub mod wrap;

/// Store label every component gets.
pub const DEFAULT_LABEL: &str = "default";

/// Store label of state that lives as long as one deployment (a model's counters): kept in
/// the host's memory ([`memory::MemoryStore`]) unless the runtime configuration names it.
/// Spin grants no such label by default; guests then keep that state in `default`.
pub const DEPLOYMENT_LABEL: &str = edge_api::model::DEPLOYMENT_STORE;
