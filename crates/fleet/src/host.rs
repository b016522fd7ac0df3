//! One host of the fleet: `runtime-host up` run inside its machine's namespace, as its unit
//! says, ready when it tells the notify socket `READY=1` (the unit is `Type=notify`). Its
//! output is kept for a failure's message; it is killed when dropped.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a host may take to be ready (compiling from an empty cache on a busy machine).
const READY_WITHIN: Duration = Duration::from_secs(240);

pub struct Host {
    child: Child,
    log: Arc<Mutex<String>>,
}

impl Host {
    /// Runs `command` with `NOTIFY_SOCKET` at `notify` and waits for `READY=1` there.
    pub fn start(mut command: Command, notify: &Path) -> Self {
        let _ = std::fs::remove_file(notify);
        let socket = UnixDatagram::bind(notify)
            .unwrap_or_else(|e| panic!("binding {}: {e}", notify.display()));
        let mut child = command
            .env("NOTIFY_SOCKET", notify)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting runtime-host up");
        let log = Arc::new(Mutex::new(String::new()));
        keep(child.stdout.take().expect("piped"), &log);
        keep(child.stderr.take().expect("piped"), &log);
        let mut host = Self { child, log };
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
            if let Ok(Some(status)) = host.child.try_wait() {
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
        self.child.id()
    }

    /// Everything it printed so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Sends `signal` (`INT`, `KILL`, ...) and waits up to `within` for the exit.
    pub fn signal_and_wait(&mut self, signal: &str, within: Duration) -> ExitStatus {
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .is_ok_and(|s| s.success());
        assert!(sent, "kill -{signal} {}", self.pid());
        let started = Instant::now();
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            if started.elapsed() > within {
                let _ = self.child.kill();
                panic!(
                    "did not exit within {within:?} of SIG{signal}:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
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
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Appends what `from` prints to `log`, on a thread of its own.
fn keep(from: impl Read + Send + 'static, log: &Arc<Mutex<String>>) {
    let log = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            let mut log = log.lock().unwrap_or_else(|e| e.into_inner());
            log.push_str(&line);
            log.push('\n');
        }
    });
}
