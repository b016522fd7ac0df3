//! The header names the host itself reads or writes, in one place.
//!
//! Spin tells a component about its route in `spin-*` headers; the native host tells the
//! registry who is calling in [`CALLER`]. Both are the host's to set: [`is_host_only`] names
//! them, and the guard removes them from every request a client sends.

pub use edge_api::error::ERROR_CODE_HEADER as ERROR_CODE;
pub use registry_core::caller::HEADER as CALLER;

/// Which part of the path is the component's own, as Spin names it (the model SDK routes on
/// it, so `/models/molprop/health` reaches the model's `/health`).
pub const PATH_INFO: &str = "spin-path-info";
/// The route of the app that matched, in Spin's syntax (`/models/molprop/...`).
pub const MATCHED_ROUTE: &str = "spin-matched-route";
/// That route without its wildcard (`/models/molprop`).
pub const COMPONENT_ROUTE: &str = "spin-component-route";
/// The app's base path (always `/` here).
pub const BASE_PATH: &str = "spin-base-path";
/// The client's address.
pub const CLIENT_ADDR: &str = "spin-client-addr";
/// The version of the model that answered (deployments that know theirs).
pub const MODEL_VERSION: &str = "x-model-version";

/// Whether only the host may set header `name` (given in lower case, as `http` keeps names).
pub fn is_host_only(name: &str) -> bool {
    name.starts_with("spin-") || name == CALLER
}
