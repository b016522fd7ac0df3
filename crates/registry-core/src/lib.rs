//! The port registry's rules, free of I/O so they are tested natively and run unchanged in
//! the `registry` component.
//!
//! - [`PortRange`]: the assignable ports (`5100-5999` by default; 5000 is never assignable);
//! - [`LeaseTable`]: which ports are leased, until when, to whom and under which registration,
//!   in a fixed-size binary
//!   form that is read, changed and compare-and-swapped as one value;
//! - [`validate`]: checks of a registration request beyond its JSON shape;
//! - [`caller`]: who is calling, and which registrations they may make and renew.

pub mod caller;
mod leases;
mod range;
pub mod validate;

pub use leases::{Assignment, Lease, LeaseTable, owner_hash, parse_id};
pub use range::PortRange;
