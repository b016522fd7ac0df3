//! One host of the fleet: `runtime-host up` run inside its machine's namespace, as its unit
//! says, ready when it tells the notify socket `READY=1` (the unit is `Type=notify`). Its
//! output is kept for a failure's message; it is killed when dropped.

use process_harness::{Output, Process, Signal, Transcript};
use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

/// How long a host may take to be ready (compiling from an empty cache on a busy machine).
const READY_WITHIN: Duration = Duration::from_secs(240);

pub struct Host {
    process: Process,
    log: Transcript,
}

impl Host {
    /// Runs `command` with `NOTIFY_SOCKET` at `notify` and waits for `READY=1` there.
    pub fn start(mut command: Command, notify: &Path) -> Self {
        let _ = std::fs::remove_file(notify);
        let socket = UnixDatagram::bind(notify)
            .unwrap_or_else(|e| panic!("binding {}: {e}", notify.display()));
        // Writable by the unit's `User=` too, as systemd's socket is.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(notify, std::fs::Permissions::from_mode(0o666))
            .expect("opening the notify socket to the service's user");
        command.env("NOTIFY_SOCKET", notify);
        let log = Transcript::new();
        let process = Process::start(
            "runtime-host up",
            command,
            Output::Kept(log.clone()),
            Output::Kept(log.clone()),
        )
        .expect("starting runtime-host up");
        let host = Self { process, log };
        socket
            .set_read_timeout(Some(Duration::from_millis(200)))
            .expect("a read timeout");
        let started = Instant::now();
        let mut said = String::new();
        while !said.lines().any(|l| l == "READY=1") {
            let mut buf = [0u8; 1024];
            if let Ok(n) = socket.recv(&mut buf) {
                said.push_str(&String::from_utf8_lossy(&buf[..n]));
            }
            if let Some(status) = host.process.exit_status() {
                panic!(
                    "runtime-host up exited ({status}) before READY=1:\n{}",
                    host.log()
                );
            }
            if started.elapsed() > READY_WITHIN {
                panic!("no READY=1 within {READY_WITHIN:?}:\n{}", host.log());
            }
        }
        host
    }

    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Everything it printed so far.
    pub fn log(&self) -> String {
        self.log.text()
    }

    /// Sends `signal` (`INT`, `KILL`, ...) and waits up to `within` for the exit.
    pub fn signal_and_wait(&mut self, signal: &str, within: Duration) -> ExitStatus {
        let sig = Signal::named(signal).unwrap_or_else(|| panic!("no signal named {signal}"));
        if let Err(e) = self.process.signal(sig) {
            panic!("kill -{signal} {}: {e}", self.pid());
        }
        self.process.wait(within).unwrap_or_else(|| {
            self.process.kill();
            panic!(
                "did not exit within {within:?} of SIG{signal}:\n{}",
                self.log()
            )
        })
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "--- runtime-host up (pid {}) ---\n{}",
                self.pid(),
                self.log()
            );
        }
    }
}
