//! A started program: where its output goes, how to wait for its exit, how to signal it.
//! One thread reaps it the moment it exits (so a wait is exact, not polled, and the bench's
//! spawn-to-exit times are true); it is killed when dropped.

use crate::Transcript;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Where one of a process's output streams goes.
pub enum Output {
    /// Read into this transcript (which stdout and stderr may share).
    Kept(Transcript),
    /// Written to this file, created afresh: the bench's log of every process.
    Log(PathBuf),
    /// Thrown away.
    Null,
    /// Shared with this process's own stream.
    Inherit,
}

/// The signals the harness sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT, Ctrl-C.
    Interrupt,
    /// SIGTERM, what a service manager sends by default.
    Terminate,
    /// SIGKILL: no chance to clean up.
    Kill,
    /// SIGHUP.
    Hangup,
    /// SIGQUIT.
    Quit,
}

impl Signal {
    /// The signal by its name as `kill -l` or systemd's `KillSignal=` write it (`INT`,
    /// `SIGTERM`, ...).
    pub fn named(name: &str) -> Option<Self> {
        Some(match name.trim_start_matches("SIG") {
            "INT" => Self::Interrupt,
            "TERM" => Self::Terminate,
            "KILL" => Self::Kill,
            "HUP" => Self::Hangup,
            "QUIT" => Self::Quit,
            _ => return None,
        })
    }

    fn number(self) -> libc::c_int {
        match self {
            Self::Interrupt => libc::SIGINT,
            Self::Terminate => libc::SIGTERM,
            Self::Kill => libc::SIGKILL,
            Self::Hangup => libc::SIGHUP,
            Self::Quit => libc::SIGQUIT,
        }
    }
}

/// A running (or exited) child process, killed when dropped if it still runs.
pub struct Process {
    name: String,
    pid: u32,
    exit: Arc<(Mutex<Option<Exit>>, Condvar)>,
}

#[derive(Clone, Copy)]
struct Exit {
    status: ExitStatus,
    at: Instant,
}

impl Process {
    /// Starts `command` (program, arguments, environment and directory as the caller set
    /// them) with no standard input and its output where `stdout` and `stderr` say.
    /// `name` says which process an error or a log is about.
    pub fn start(
        name: &str,
        mut command: Command,
        stdout: Output,
        stderr: Output,
    ) -> std::io::Result<Self> {
        let (out, out_kept) = stdio(stdout)?;
        let (err, err_kept) = stdio(stderr)?;
        let mut child = command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()?;
        if let Some(kept) = out_kept {
            kept.keep(child.stdout.take().expect("stdout is piped"));
        }
        if let Some(kept) = err_kept {
            kept.keep(child.stderr.take().expect("stderr is piped"));
        }
        let process = Self {
            name: name.to_owned(),
            pid: child.id(),
            exit: Arc::default(),
        };
        let exit = process.exit.clone();
        std::thread::spawn(move || reap(child, &exit));
        Ok(process)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Its exit status, once it has exited.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.lock().map(|e| e.status)
    }

    /// When it exited (as its reaping thread saw it), once it has.
    pub fn exited_at(&self) -> Option<Instant> {
        self.lock().map(|e| e.at)
    }

    /// Sends `signal`; nothing to do once it has exited (as kill(2) to a zombie succeeds),
    /// an error if the signal could not be sent.
    pub fn signal(&self, signal: Signal) -> std::io::Result<()> {
        let exit = self.lock();
        if exit.is_some() {
            return Ok(());
        }
        // SAFETY: kill(2) with a pid this process spawned and has not reaped: the reaping
        // thread reaps only while holding this lock, and records the exit as it does.
        if unsafe { libc::kill(self.pid as libc::pid_t, signal.number()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        drop(exit);
        Ok(())
    }

    /// Waits up to `within` for the exit; `None` if it still runs then.
    pub fn wait(&self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        let mut exit = self.lock();
        loop {
            if let Some(e) = *exit {
                return Some(e.status);
            }
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            exit = match self.exit.1.wait_timeout(exit, deadline - now) {
                Ok((exit, _)) => exit,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Sends `signal` and waits up to `grace` for the exit; kills it after that. Its exit
    /// status, whichever ended it.
    pub fn stop(&self, signal: Signal, grace: Duration) -> ExitStatus {
        let _ = self.signal(signal);
        self.wait(grace).unwrap_or_else(|| self.kill())
    }

    /// SIGKILL, and its exit status once reaped.
    pub fn kill(&self) -> ExitStatus {
        let _ = self.signal(Signal::Kill);
        // A process in uninterruptible sleep outlives SIGKILL for a while; that is all. Never
        // a panic here: `kill` runs in `Drop`s, maybe while a failed test unwinds already.
        self.wait(Duration::from_secs(60)).unwrap_or_else(|| {
            eprintln!("{} (pid {}) survived SIGKILL for 60 s", self.name, self.pid);
            ExitStatus::from_raw(libc::SIGKILL)
        })
    }

    fn lock(&self) -> MutexGuard<'_, Option<Exit>> {
        self.exit.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.exit_status().is_none() {
            let _ = self.signal(Signal::Kill);
            let _ = self.wait(Duration::from_secs(60));
        }
    }
}

/// The `Stdio` for `output`, and the transcript to read the pipe into, if kept.
fn stdio(output: Output) -> std::io::Result<(Stdio, Option<Transcript>)> {
    Ok(match output {
        Output::Kept(kept) => (Stdio::piped(), Some(kept)),
        Output::Log(path) => {
            let file = std::fs::File::create(&path).map_err(|e| {
                std::io::Error::new(e.kind(), format!("creating {}: {e}", path.display()))
            })?;
            (Stdio::from(file), None)
        }
        Output::Null => (Stdio::null(), None),
        Output::Inherit => (Stdio::inherit(), None),
    })
}

/// Waits for `child` to exit and records when and how, waking every waiter. The exit is
/// awaited without reaping (`WNOWAIT`: the child stays a zombie, its pid taken), and reaped
/// only under the lock [`Process::signal`] holds while it sends: so a signal never reaches a
/// pid that was reaped and could already belong to another process.
fn reap(mut child: Child, exit: &(Mutex<Option<Exit>>, Condvar)) {
    let pid = child.id() as libc::id_t;
    loop {
        // SAFETY: waitid(2) on our own child with a zeroed siginfo it fills in; WNOWAIT
        // leaves the child to be reaped by `child.wait()` below.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if r == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
    }
    let mut recorded = exit.0.lock().unwrap_or_else(|e| e.into_inner());
    // wait(2) fails only if the child is not ours to wait for; call that a failure (-1).
    let status = child
        .wait()
        .unwrap_or_else(|_| ExitStatus::from_raw(0xff << 8));
    *recorded = Some(Exit {
        status,
        at: Instant::now(),
    });
    drop(recorded);
    exit.1.notify_all();
}

/// Waits up to `timeout` for a `Child` the caller spawned itself to exit; `None` if it is
/// still running then (polled every 20 ms).
pub fn wait_for_exit(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("waiting for a child process") {
            return Some(status);
        }
        if start.elapsed() >= timeout {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn keeps_both_streams_and_sees_the_exit_when_it_happens() {
        let said = Transcript::new();
        let started = Instant::now();
        let p = Process::start(
            "sh",
            sh("echo out; echo err >&2; sleep 0.2; exit 3"),
            Output::Kept(said.clone()),
            Output::Kept(said.clone()),
        )
        .unwrap();
        let status = p.wait(Duration::from_secs(10)).expect("it exits");
        assert_eq!(status.code(), Some(3));
        let took = p.exited_at().unwrap() - started;
        assert!(took >= Duration::from_millis(200), "{took:?}");
        assert!(said.wait_for_end(Duration::from_secs(10)));
        let text = said.text();
        assert!(text.contains("out\n") && text.contains("err\n"), "{text:?}");
        assert!(
            p.signal(Signal::Terminate).is_ok(),
            "a signal after the exit does nothing"
        );
        assert_eq!(p.stop(Signal::Terminate, Duration::ZERO).code(), Some(3));
    }

    #[test]
    fn stops_by_signal_and_kills_what_ignores_it() {
        let p = Process::start("sleep", sh("exec sleep 30"), Output::Null, Output::Null).unwrap();
        let status = p.stop(Signal::Interrupt, Duration::from_secs(10));
        assert_eq!(status.signal(), Some(libc::SIGINT));
        let stubborn = Process::start(
            "stubborn",
            sh("trap '' TERM; echo ready; while :; do sleep 0.05; done"),
            Output::Kept(Transcript::new()),
            Output::Null,
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let status = stubborn.stop(Signal::Terminate, Duration::from_millis(300));
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }

    #[test]
    fn a_dropped_process_is_killed_and_a_log_file_gets_its_output() {
        let dir = std::env::temp_dir().join(format!("process-harness-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("err.log");
        let p = Process::start(
            "sleeper",
            sh("echo to the log >&2; exec sleep 30"),
            Output::Null,
            Output::Log(log.clone()),
        )
        .unwrap();
        let pid = p.pid();
        std::thread::sleep(Duration::from_millis(200));
        drop(p);
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "pid {pid} outlived its Process"
        );
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "to the log\n");
        let missing = Process::start(
            "x",
            sh("true"),
            Output::Null,
            Output::Log(dir.join("no/such/dir/x.log")),
        );
        let why = missing.err().expect("no log file, no process").to_string();
        assert!(why.contains("no/such/dir/x.log"), "{why}");
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(Signal::named("SIGINT"), Some(Signal::Interrupt));
        assert_eq!(Signal::named("TERM"), Some(Signal::Terminate));
        assert_eq!(Signal::named("SIGWHAT"), None);
    }
}
