//! What the whole process holds of request bodies still arriving, bounded. A body is read
//! whole before its request takes a slot (see [`crate::body`]), so a client that sends
//! all of a body but its last byte and waits holds that memory until its deadline: 2,000
//! such clients took a host from 1.3 GB to 4.0 GB. So every body being received counts
//! against two process-wide limits, its declared length as soon as its headers arrive:
//! bytes held (`--max-held-bodies`) and bodies being received at once (`--max-receiving`).
//! Past either, the request is answered 503 `overloaded` at once and its connection closed;
//! requests without a body (`/health`, every GET) never count, so they keep being answered.
//!
//! What is counted is what is allocated (issue 56, item 11: bodies peaked at 466-471 MiB
//! against the 256 MiB budget): a body's buffer by its capacity, not its length (a body of
//! no declared length grows by doubling), and, for each body being received, its
//! connection's read buffer ([`READ_BUFFER_HELD`]): hyper's default let one grow to about
//! 800 KiB, uncounted, so 256 held connections took some 200 MiB beyond the budget. The read
//! buffer is now capped at [`READ_BUFFER`]. What remains outside the budget is small: the
//! read buffers of connections not receiving a body (at most [`READ_BUFFER_HELD`] each,
//! closed after the header timeout when idle) and the allocator's own overhead.
//!
//! There is no share per client address: on the machine the host is made for, every local
//! client (each model, the console, scripts) comes from 127.0.0.1, so a share per address
//! would be one share for all.

use std::sync::atomic::{AtomicUsize, Ordering};

pub use host_runtime::limits::{DEFAULT_MAX_HELD_BYTES, DEFAULT_MAX_RECEIVING};

/// The largest read buffer of one connection (hyper's `max_buf_size`; its default is about
/// 400 KiB). Request headers must fit in it; 64 KiB is far beyond any this host's clients send.
pub const READ_BUFFER: usize = 64 << 10;

/// What a connection's read buffer may hold at most, counted for each body being received:
/// hyper grows the buffer by reserving up to [`READ_BUFFER`] more while the body's frames
/// still share the old allocation, so up to twice that.
pub const READ_BUFFER_HELD: usize = 2 * READ_BUFFER;

static MAX_BYTES: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_HELD_BYTES);
static MAX_RECEIVING: AtomicUsize = AtomicUsize::new(DEFAULT_MAX_RECEIVING);
static BYTES: AtomicUsize = AtomicUsize::new(0);
static RECEIVING: AtomicUsize = AtomicUsize::new(0);

/// Sets the process's limits (from the command line, once at start).
pub fn configure(max_bytes: usize, max_receiving: usize) {
    MAX_BYTES.store(max_bytes, Ordering::Relaxed);
    MAX_RECEIVING.store(max_receiving.max(1), Ordering::Relaxed);
}

/// Bytes held and bodies being received now, for the metrics.
pub fn now() -> (usize, usize) {
    (
        BYTES.load(Ordering::Relaxed),
        RECEIVING.load(Ordering::Relaxed),
    )
}

/// Why a body was refused: what a 503 says.
#[derive(Debug)]
pub struct Refused(pub String);

/// One body being received and what it holds; given back when dropped.
#[derive(Debug)]
pub struct Held {
    bytes: usize,
}

impl Held {
    /// Counts one more body being received, refused past `--max-receiving`.
    pub fn begin() -> Result<Self, Refused> {
        let max = MAX_RECEIVING.load(Ordering::Relaxed);
        let taken = RECEIVING.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < max).then_some(n + 1)
        });
        match taken {
            Ok(_) => Ok(Self { bytes: 0 }),
            Err(_) => Err(Refused(format!(
                "the host is receiving {max} request bodies at once, its limit \
                 (--max-receiving); retry shortly"
            ))),
        }
    }

    /// Counts `n` more bytes held, refused past `--max-held-bodies`.
    pub fn grow(&mut self, n: usize) -> Result<(), Refused> {
        let max = MAX_BYTES.load(Ordering::Relaxed);
        let taken = BYTES.fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
            held.checked_add(n).filter(|&t| t <= max)
        });
        match taken {
            Ok(_) => {
                self.bytes += n;
                Ok(())
            }
            Err(_) => Err(Refused(format!(
                "the host holds {} MiB of request bodies still arriving, its limit \
                 (--max-held-bodies); retry shortly",
                max >> 20
            ))),
        }
    }
}

impl Held {
    /// Makes what is held at least `total` bytes.
    pub fn cover(&mut self, total: usize) -> Result<(), Refused> {
        match total.checked_sub(self.bytes) {
            Some(more) if more > 0 => self.grow(more),
            _ => Ok(()),
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        BYTES.fetch_sub(self.bytes, Ordering::AcqRel);
        RECEIVING.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One test touches the process-wide counters, so no other test races it.
    #[test]
    fn bodies_are_refused_past_either_limit_and_given_back_when_done() {
        configure(10, 2);
        let mut a = Held::begin().unwrap();
        a.grow(6).unwrap();
        let mut b = Held::begin().unwrap();
        assert!(Held::begin().is_err(), "a third body at once");
        assert!(b.grow(5).is_err(), "16 bytes of 10");
        b.grow(4).unwrap();
        assert_eq!(now(), (10, 2));
        drop(a);
        assert_eq!(now(), (4, 1));
        let mut c = Held::begin().unwrap();
        c.grow(6).unwrap();
        drop((b, c));
        assert_eq!(now(), (0, 0));
        configure(DEFAULT_MAX_HELD_BYTES, DEFAULT_MAX_RECEIVING);
    }
}
