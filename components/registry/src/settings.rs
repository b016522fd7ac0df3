//! The registry's configuration, from application variables.

use guest_kit::{ApiError, config};
use registry_core::PortRange;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Lease length unless `registry_ttl_secs` says otherwise (docs/DESIGN.md).
const DEFAULT_TTL_SECS: u64 = 120;

/// Live registrations one holder may have unless `registry_max_per_process` says otherwise.
const DEFAULT_MAX_PER_PROCESS: usize = 64;

pub struct Settings {
    pub ttl: Duration,
    pub range: PortRange,
    /// Most live registrations per process (or remote machine); 0 for no limit.
    pub max_per_process: usize,
    /// Most live registrations per local user, as the native host names the registering
    /// connection's owner (`registry_max_per_user`, default a quarter of the range, see
    /// [`PortRange::default_per_user_cap`]); 0 for no limit. Without it one user's processes,
    /// each within its own allowance, took every port of a range.
    pub max_per_user: usize,
}

impl Settings {
    pub fn load() -> Result<Self, ApiError> {
        let ttl_secs: u64 = config::parsed("registry_ttl_secs", DEFAULT_TTL_SECS)?;
        if ttl_secs == 0 {
            return Err(ApiError::internal(
                "variable `registry_ttl_secs` must be at least 1",
            ));
        }
        let range = match config::non_empty("registry_ports")? {
            None => PortRange::default(),
            Some(r) => PortRange::parse(&r)
                .map_err(|e| ApiError::internal(format!("variable `registry_ports`: {e}")))?,
        };
        Ok(Self {
            ttl: Duration::from_secs(ttl_secs),
            range,
            max_per_process: config::parsed("registry_max_per_process", DEFAULT_MAX_PER_PROCESS)?,
            max_per_user: config::parsed(
                "registry_max_per_user",
                range.default_per_user_cap() as usize,
            )?,
        })
    }

    pub fn ttl_ms(&self) -> u64 {
        self.ttl.as_millis() as u64
    }
}

/// The secret the native host uses on the maintenance route; `None` disables the route.
pub fn maintenance_token() -> Result<Option<String>, ApiError> {
    config::non_empty("registry_maintenance_token")
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

pub fn ms_to_time(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}
