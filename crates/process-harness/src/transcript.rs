//! What a process printed, kept in memory line by line as it comes, so a caller can wait for
//! a line (`listening on ...`, `stack ready`) and show the whole of it when something fails.

use std::io::{BufRead, BufReader, Read};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The text read so far from one or more streams (a process's stdout and stderr may share
/// one); cloning gives another handle on the same text.
#[derive(Clone, Default)]
pub struct Transcript {
    shared: Arc<(Mutex<Kept>, Condvar)>,
}

#[derive(Default)]
struct Kept {
    text: String,
    /// Streams still being read; none left means nothing more will come.
    open: usize,
}

/// Why the line waited for did not come.
#[derive(Debug, PartialEq, Eq)]
pub enum Unsaid {
    /// Every stream ended (the process exited, most likely) without it.
    Ended,
    /// Not within the time given.
    TimedOut(Duration),
}

impl std::fmt::Display for Unsaid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsaid::Ended => write!(f, "its output ended first"),
            Unsaid::TimedOut(within) => write!(f, "not within {within:?}"),
        }
    }
}

impl Transcript {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends what `from` yields, line by line, on a thread of its own until it ends. Bytes
    /// that are not UTF-8 are kept lossily rather than ending the reading, so a pipe is
    /// always drained and its writer never blocks on it.
    pub fn keep(&self, from: impl Read + Send + 'static) {
        self.lock().open += 1;
        let kept = self.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(from);
            let mut line = Vec::new();
            while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                let mut state = kept.lock();
                state.text.push_str(&String::from_utf8_lossy(&line));
                state.text.push('\n');
                drop(state);
                kept.shared.1.notify_all();
                line.clear();
            }
            kept.lock().open -= 1;
            kept.shared.1.notify_all();
        });
    }

    /// Everything kept so far.
    pub fn text(&self) -> String {
        self.lock().text.clone()
    }

    /// Waits up to `within` for a line that `wanted` accepts; returns the lines up to and
    /// including the first such one.
    pub fn wait_for_line(
        &self,
        wanted: impl Fn(&str) -> bool,
        within: Duration,
    ) -> Result<Vec<String>, Unsaid> {
        let deadline = Instant::now() + within;
        let mut state = self.lock();
        loop {
            let mut lines = Vec::new();
            for line in state.text.lines() {
                lines.push(line.to_owned());
                if wanted(line) {
                    return Ok(lines);
                }
            }
            if state.open == 0 {
                return Err(Unsaid::Ended);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Unsaid::TimedOut(within));
            }
            state = self.wait(state, deadline - now);
        }
    }

    /// Waits up to `within` until every stream has ended (the process exited and its output
    /// is all read); whether they had.
    pub fn wait_for_end(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        let mut state = self.lock();
        while state.open > 0 {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            state = self.wait(state, deadline - now);
        }
        true
    }

    fn lock(&self) -> MutexGuard<'_, Kept> {
        self.shared.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, state: MutexGuard<'a, Kept>, at_most: Duration) -> MutexGuard<'a, Kept> {
        match self.shared.1.wait_timeout(state, at_most) {
            Ok((state, _)) => state,
            Err(poisoned) => poisoned.into_inner().0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_line_that_comes_later_and_returns_the_lines_before_it() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let kept = Transcript::new();
        kept.keep(reader);
        let writing = std::thread::spawn(move || {
            use std::io::Write;
            writer.write_all(b"starting\n").unwrap();
            std::thread::sleep(Duration::from_millis(50));
            writer
                .write_all(b"listening on http://127.0.0.1:1\nmore\n")
                .unwrap();
        });
        let lines = kept
            .wait_for_line(|l| l.starts_with("listening on"), Duration::from_secs(10))
            .unwrap();
        assert_eq!(lines, ["starting", "listening on http://127.0.0.1:1"]);
        writing.join().unwrap();
        assert!(kept.wait_for_end(Duration::from_secs(10)));
        assert_eq!(
            kept.text(),
            "starting\nlistening on http://127.0.0.1:1\nmore\n"
        );
    }

    #[test]
    fn says_why_a_line_did_not_come() {
        let kept = Transcript::new();
        kept.keep(&b"one\ntwo, \xff not UTF-8\nno newline at the end"[..]);
        assert_eq!(
            kept.wait_for_line(|l| l == "three", Duration::from_secs(10)),
            Err(Unsaid::Ended)
        );
        assert_eq!(
            kept.text(),
            "one\ntwo, \u{fffd} not UTF-8\nno newline at the end\n"
        );
        let (reader, _writer) = std::io::pipe().unwrap();
        let open = Transcript::new();
        open.keep(reader);
        let within = Duration::from_millis(50);
        assert_eq!(
            open.wait_for_line(|_| true, within),
            Err(Unsaid::TimedOut(within))
        );
        assert!(!open.wait_for_end(within));
    }
}
