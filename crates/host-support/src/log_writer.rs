//! Where the host's log lines go: a buffer in memory that a background thread writes to
//! stderr in batches, so a request never waits on stderr and does not wake a thread either.
//!
//! Why not `tracing-appender`'s non-blocking writer (used before): it hands every line to its
//! thread through a channel, so at tens of thousands of requests a second that thread woke
//! for about every other line and spun in `sched_yield` waiting for the next: about 10 % of
//! the host's CPU under load on `/health`, with a reschedule interrupt per wake-up. Here the
//! first request line ([`queue`], from [`crate::request_log`]) after a quiet spell wakes the
//! thread, which then gathers lines for [`BATCH_WINDOW`] and writes them in one go.
//!
//! Nothing is dropped: when stderr cannot keep up and [`MAX_PENDING`] bytes are waiting, a
//! logging thread waits for the writer. Every other line (the `tracing` events: lifecycle,
//! warnings, errors) is written out before the call that logged it returns, with everything
//! queued before it, in order: so a line that explains an exit is on stderr before the
//! process ends, and a line saying that something happened is there once it has. [`flush`]
//! does the same on demand.

use std::io::Write;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;
use tracing_subscriber::fmt::MakeWriter;

/// How long the writer gathers lines after the first one wakes it.
const BATCH_WINDOW: Duration = Duration::from_millis(20);
/// Bytes queued at most before a logging thread waits for the writer.
const MAX_PENDING: usize = 4 << 20;

/// The one sink of the process (stderr is one per process too).
static SINK: OnceLock<Sink> = OnceLock::new();

struct Sink {
    pending: Mutex<Pending>,
    /// Tells the writer thread that lines are waiting (or that it should stop).
    wake: Condvar,
    /// Tells a logging thread waiting for room that the writer took the queue.
    drained: Condvar,
    /// Held while a batch is taken and written, so batches reach stderr in the order queued.
    out: Mutex<()>,
}

#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    stopping: bool,
}

/// The `MakeWriter` for `tracing_subscriber::fmt`: each event is appended to the queue.
#[derive(Clone, Copy)]
pub struct BatchedStderr;

/// Writes what is queued when dropped (at the end of `main`) and stops the writer thread.
pub struct FlushOnDrop(Option<std::thread::JoinHandle<()>>);

/// Starts the writer thread. Call once, before logging; later calls share the first sink.
pub fn start() -> (BatchedStderr, FlushOnDrop) {
    let mut started = false;
    SINK.get_or_init(|| {
        started = true;
        Sink {
            pending: Mutex::new(Pending::default()),
            wake: Condvar::new(),
            drained: Condvar::new(),
            out: Mutex::new(()),
        }
    });
    if started {
        // A panic's message goes straight to stderr: the request lines before it go first.
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(sink) = SINK.get() {
                sink.write_out_unless_busy();
            }
            report(info)
        }));
    }
    let thread = started.then(|| {
        std::thread::Builder::new()
            .name("log-writer".into())
            .spawn(write_batches)
            .expect("spawning the log writer thread")
    });
    (BatchedStderr, FlushOnDrop(thread))
}

/// Queues a line put together elsewhere (the request log) for the next batch: the one kind
/// of line that comes by the thousand.
pub fn queue(line: &[u8]) {
    if let Some(sink) = SINK.get() {
        sink.append(line);
    }
}

/// How log lines are written: for people (tracing's full format, the default) or for a log
/// pipeline (`--log-format json`: one JSON object a line, every line of the process).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

static FORMAT: OnceLock<LogFormat> = OnceLock::new();

/// Sets the process's log format, once, before the first line (later calls change nothing).
pub fn set_format(format: LogFormat) {
    let _ = FORMAT.set(format);
}

/// The process's log format (text where none was set).
pub fn format() -> LogFormat {
    *FORMAT.get_or_init(LogFormat::default)
}

/// Whether stderr is a terminal: then lines are styled with colours, else plain. Asked once,
/// for the fmt layer and the request log alike. Never in JSON.
pub fn colours() -> bool {
    if format() == LogFormat::Json {
        return false;
    }
    static ANSI: OnceLock<bool> = OnceLock::new();
    *ANSI.get_or_init(|| std::io::IsTerminal::is_terminal(&std::io::stderr()))
}

/// Writes everything queued so far to stderr now (before `std::process::exit`, say).
pub fn flush() {
    if let Some(sink) = SINK.get() {
        sink.write_out();
    }
}

impl Drop for FlushOnDrop {
    fn drop(&mut self) {
        let Some(sink) = SINK.get() else { return };
        sink.lock_pending().stopping = true;
        sink.wake.notify_one();
        if let Some(thread) = self.0.take() {
            let _ = thread.join();
        }
        sink.write_out();
    }
}

fn write_batches() {
    let sink = SINK
        .get()
        .expect("the sink is set before its thread starts");
    loop {
        {
            let mut pending = sink.lock_pending();
            while pending.bytes.is_empty() && !pending.stopping {
                pending = sink.wake.wait(pending).unwrap_or_else(|p| p.into_inner());
            }
            if pending.stopping {
                return;
            }
        }
        std::thread::sleep(BATCH_WINDOW);
        sink.write_out();
    }
}

impl Sink {
    fn lock_pending(&self) -> MutexGuard<'_, Pending> {
        // Appending or taking bytes cannot leave the queue half-changed.
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn append(&self, line: &[u8]) {
        let mut pending = self.lock_pending();
        while pending.bytes.len() >= MAX_PENDING && !pending.stopping {
            pending = self
                .drained
                .wait(pending)
                .unwrap_or_else(|p| p.into_inner());
        }
        let was_empty = pending.bytes.is_empty();
        pending.bytes.extend_from_slice(line);
        drop(pending);
        if was_empty {
            self.wake.notify_one();
        }
    }

    /// Takes the queue and writes it, in the order batches were taken.
    fn write_out(&self) {
        let out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        self.write_batch(out);
    }

    /// [`Self::write_out`] unless a batch is being written (by a thread that may be the one
    /// panicking: waiting for it would never end).
    fn write_out_unless_busy(&self) {
        if let Ok(out) = self.out.try_lock() {
            self.write_batch(out);
        }
    }

    fn write_batch(&self, _out: MutexGuard<'_, ()>) {
        let batch = std::mem::take(&mut self.lock_pending().bytes);
        self.drained.notify_all();
        if !batch.is_empty() {
            let mut stderr = std::io::stderr().lock();
            // Nowhere to report a failing stderr; the lines are lost as they would be anyway.
            let _ = stderr.write_all(&batch);
            let _ = stderr.flush();
        }
    }
}

/// One event's bytes (the fmt layer writes an event in one call, but need not), on stderr
/// with everything queued before them once the event is written.
pub struct EventWriter;

impl Write for EventWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        queue(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for EventWriter {
    fn drop(&mut self) {
        flush();
    }
}

impl<'a> MakeWriter<'a> for BatchedStderr {
    type Writer = EventWriter;

    fn make_writer(&'a self) -> EventWriter {
        EventWriter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_written_out_with_what_was_queued_before_it() {
        let (make, _flush) = start();
        queue(b"a request line, queued\n");
        let mut event = make.make_writer();
        event.write_all(b"then a warning\n").unwrap();
        drop(event);
        assert!(SINK.get().unwrap().lock_pending().bytes.is_empty());
    }
}
