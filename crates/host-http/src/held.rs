//! What the whole process holds of request bodies still arriving, bounded. A body is read
//! whole before its request takes a slot (see [`crate::body`]), so a client that sends
//! all of a body but its last byte and waits holds that memory until its deadline: 2,000
//! such clients took a host from 1.3 GB to 4.0 GB. So every body being received counts
//! against two process-wide limits, its declared length as soon as its headers arrive:
//! bytes held (`--max-held-bodies`) and bodies being received at once (`--max-receiving`),
//! both from the process's [`crate::settings`].
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

use crate::settings;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest read buffer of one connection (hyper's `max_buf_size`; its default is about
/// 400 KiB). Request headers must fit in it; 64 KiB is far beyond any this host's clients send.
pub const READ_BUFFER: usize = 64 << 10;

/// What a connection's read buffer may hold at most, counted for each body being received:
/// hyper grows the buffer by reserving up to [`READ_BUFFER`] more while the body's frames
/// still share the old allocation, so up to twice that.
pub const READ_BUFFER_HELD: usize = 2 * READ_BUFFER;

/// Two limits and what is counted against them.
#[derive(Debug)]
pub struct Budget {
    max_bytes: usize,
    max_receiving: usize,
    bytes: AtomicUsize,
    receiving: AtomicUsize,
}

impl Budget {
    pub const fn new(max_bytes: usize, max_receiving: usize) -> Self {
        Self {
            max_bytes,
            max_receiving,
            bytes: AtomicUsize::new(0),
            receiving: AtomicUsize::new(0),
        }
    }

    /// Bytes held and bodies being received now.
    pub fn now(&self) -> (usize, usize) {
        (
            self.bytes.load(Ordering::Relaxed),
            self.receiving.load(Ordering::Relaxed),
        )
    }

    /// Counts one more body being received, refused past `--max-receiving`.
    pub fn begin(&'static self) -> Result<Held, Refused> {
        let max = self.max_receiving;
        let taken = self
            .receiving
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            });
        match taken {
            Ok(_) => Ok(Held {
                budget: self,
                bytes: 0,
            }),
            Err(_) => Err(Refused(format!(
                "the host is receiving {max} request bodies at once, its limit \
                 (--max-receiving); retry shortly"
            ))),
        }
    }
}

/// The process's budget, from its settings.
pub fn process() -> &'static Budget {
    static PROCESS: OnceLock<Budget> = OnceLock::new();
    PROCESS.get_or_init(|| {
        let s = settings::current();
        Budget::new(s.max_held_bytes, s.max_receiving)
    })
}

/// Why a body was refused: what a 503 says.
#[derive(Debug)]
pub struct Refused(pub String);

/// One body being received and what it holds; given back when dropped.
#[derive(Debug)]
pub struct Held {
    budget: &'static Budget,
    bytes: usize,
}

impl Held {
    /// Counts one more body being received in the process, refused past `--max-receiving`.
    pub fn begin() -> Result<Self, Refused> {
        process().begin()
    }

    /// Counts `n` more bytes held, refused past `--max-held-bodies`.
    pub fn grow(&mut self, n: usize) -> Result<(), Refused> {
        let max = self.budget.max_bytes;
        let taken = self
            .budget
            .bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
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
        self.budget.bytes.fetch_sub(self.bytes, Ordering::AcqRel);
        self.budget.receiving.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_refused_past_either_limit_and_given_back_when_done() {
        let budget: &'static Budget = Box::leak(Box::new(Budget::new(10, 2)));
        let now = || budget.now();
        let mut a = budget.begin().unwrap();
        a.grow(6).unwrap();
        let mut b = budget.begin().unwrap();
        assert!(budget.begin().is_err(), "a third body at once");
        assert!(b.grow(5).is_err(), "16 bytes of 10");
        b.grow(4).unwrap();
        assert_eq!(now(), (10, 2));
        drop(a);
        assert_eq!(now(), (4, 1));
        let mut c = budget.begin().unwrap();
        c.grow(6).unwrap();
        drop((b, c));
        assert_eq!(now(), (0, 0));
    }
}
