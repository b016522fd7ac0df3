//! The one way the tests, the bench and the fleet start programs (`runtime-host`, Spin,
//! HAProxy, the peers): a [`Process`] with its output kept in memory ([`Transcript`]) or
//! written to a log file ([`Output`]), waited on for a line or its exit, signalled, and
//! killed when dropped, so no server outlives what started it. What is specific to each user
//! (a host's flags, the fleet's notify socket, the bench's measurements) stays with it.

mod process;
mod status;
mod transcript;

pub use process::{Output, Process, Signal, wait_for_exit};
pub use status::{processes_with, pss_mib, rss_mib, status_kib};
pub use transcript::{Transcript, Unsaid};

/// A loopback port nothing listens on right now (the kernel's pick; it may be taken by the
/// time a server binds it, so callers that race other processes retry).
pub fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}
