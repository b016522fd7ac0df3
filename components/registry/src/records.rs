//! Registry state in the key-value store.
//!
//! - `registry/leases`: the [`LeaseTable`], one binary value, changed only by
//!   compare-and-swap; it alone decides which ports are taken, and by which registration id.
//! - `registry/port/<port>`: the [`Record`] of the registration holding that port. A record
//!   counts only while the lease holds its `registration_id`; records of expired or
//!   released registrations are simply overwritten when the port is handed out again, so no
//!   delete can ever race with a new registration.

use crate::settings::Settings;
use edge_api::registry::RegistryEntry;
use guest_kit::kv::{Change, Store};
use guest_kit::{ApiError, ErrorCode};
use registry_core::{Lease, LeaseTable, parse_id};
use serde::{Deserialize, Serialize};

const LEASES_KEY: &str = "registry/leases";

pub fn record_key(port: u16) -> String {
    format!("registry/port/{port}")
}

/// A stored registration: the public entry plus its secret id.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub registration_id: String,
    /// Who the registration counts against (`pid:<n>` or `remote:<addr>`); records written
    /// before it existed count against their process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<String>,
    /// The local user who registered it (`uid:<n>`, as the native host names the
    /// connection's owner), counted against `registry_max_per_user`; absent where no host
    /// vouches (Spin) and in records written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(flatten)]
    pub entry: RegistryEntry,
}

impl Record {
    pub fn holder(&self) -> String {
        self.holder
            .clone()
            .unwrap_or_else(|| format!("pid:{}", self.entry.process_id))
    }

    /// Whether this record is the one the lease was granted to.
    pub fn holds(&self, lease: &Lease) -> bool {
        parse_id(&self.registration_id) == Some(lease.id)
    }
}

pub struct Registry {
    pub store: Store,
    pub settings: Settings,
}

impl Registry {
    pub fn open() -> Result<Self, ApiError> {
        Ok(Self {
            store: Store::open_default()?,
            settings: Settings::load()?,
        })
    }

    fn decode(&self, bytes: Option<&[u8]>) -> Result<LeaseTable, ApiError> {
        LeaseTable::decode(self.settings.range, bytes)
            .map_err(|e| ApiError::new(ErrorCode::StoreError, format!("`{LEASES_KEY}`: {e}")))
    }

    /// The current lease table, for reading.
    pub fn leases(&self) -> Result<LeaseTable, ApiError> {
        self.decode(self.store.get(LEASES_KEY)?.as_deref())
    }

    /// Atomically changes the lease table. `f` gets the table with expired leases already
    /// swept; if it returns `Ok`, the table (sweep included) is written back.
    pub fn with_leases<R>(
        &self,
        now_ms: u64,
        mut f: impl FnMut(&mut LeaseTable) -> Result<R, ApiError>,
    ) -> Result<R, ApiError> {
        self.store.update_bytes(LEASES_KEY, |bytes| {
            let mut table = self.decode(bytes)?;
            table.sweep(now_ms);
            let result = f(&mut table)?;
            Ok((Change::Put(table.encode()), result))
        })
    }

    pub fn record(&self, port: u16) -> Result<Option<Record>, ApiError> {
        self.store.get_json(&record_key(port))
    }

    /// The record holding `lease` on `port`, if it is written and current.
    pub fn current_record(&self, port: u16, lease: &Lease) -> Result<Option<Record>, ApiError> {
        Ok(self.record(port)?.filter(|r| r.holds(lease)))
    }

    /// Changes the record of `registration_id` on `port`, unless it was replaced meanwhile.
    pub fn update_record(
        &self,
        port: u16,
        registration_id: &str,
        mut f: impl FnMut(&mut Record),
    ) -> Result<(), ApiError> {
        self.store
            .update(&record_key(port), |current: Option<Record>| {
                Ok(match current {
                    Some(mut r) if r.registration_id == registration_id => {
                        f(&mut r);
                        (Change::Put(r), ())
                    }
                    _ => (Change::Keep, ()),
                })
            })
    }
}
