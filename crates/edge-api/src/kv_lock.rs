//! The names and times of guest-kit's "lock of increments", shared by its two sides: the
//! guests that take it where a store's compare-and-swap cannot be trusted (Spin's Redis
//! store, `guest-kit::kv::lock`) and `runtime-host`'s Redis store, whose writes must not land
//! while such a guest holds it (`keyvalue-stores::redis`). One definition here, so that a
//! `spin up` and a `runtime-host` on one Redis keep to the same protocol.

/// The lock of the record at `key` is the counter at this prefix followed by the key.
pub const LOCK_PREFIX: &str = "guest-kit/lock/";

/// After this long a held lock is taken for one whose holder is gone. It is at least the
/// holder's [`HOLD_MS`] plus [`IN_FLIGHT_MS`]: a holder starts no write after `HOLD_MS`, and
/// a write it started by then has reached the store `IN_FLIGHT_MS` later. Nothing inside a
/// Spin guest can prove the holder dead sooner: the key-value interface has no expiry and no
/// holder identity, and Spin 4.0.2's Redis client sets no timeout on a call, so a write in
/// flight has no proven end; the allowance is far beyond what one write takes (milliseconds).
pub const STALE_MS: i64 = HOLD_MS as i64 + IN_FLIGHT_MS;

/// What the holder has, from taking the lock, to start its last write.
pub const HOLD_MS: u64 = 3_000;

/// The allowance for a write started within [`HOLD_MS`] to reach the store.
pub const IN_FLIGHT_MS: i64 = 7_000;

/// Values of the counter within this long before now read as one holder's timestamp (older
/// ones, and sums of several, as residues: see `guest-kit::kv::lock`).
pub const ONE_TIMESTAMP_WITHIN_MS: i64 = 3_600_000;

/// The counter that locks the record at `key`.
pub fn lock_key(key: &str) -> String {
    format!("{LOCK_PREFIX}{key}")
}
