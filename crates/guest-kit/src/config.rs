//! Application variables through `wasi:config/store`, the interface Spin maps its component
//! variables onto (and `runtime-host` serves from `--variable` / `SPIN_VARIABLE_*`).

use edge_api::error::ApiError;
use spin_sdk::wit::wasi::config::store;

/// The variable's value, `None` when it is not defined.
pub fn variable(name: &str) -> Result<Option<String>, ApiError> {
    store::get(name).map_err(|e| ApiError::internal(format!("reading variable `{name}`: {e:?}")))
}

/// The variable's value, `None` when it is undefined or empty.
pub fn non_empty(name: &str) -> Result<Option<String>, ApiError> {
    Ok(variable(name)?.filter(|v| !v.is_empty()))
}

/// The variable parsed as `T`, or `default` when undefined or empty.
pub fn parsed<T: std::str::FromStr>(name: &str, default: T) -> Result<T, ApiError> {
    match non_empty(name)? {
        None => Ok(default),
        Some(v) => v.trim().parse().map_err(|_| {
            ApiError::internal(format!("variable `{name}` has an invalid value `{v}`"))
        }),
    }
}
