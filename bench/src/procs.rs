//! The processes a benchmark starts (through the workspace's process harness): spawned with
//! stdout read and stderr in a log file per process, found ready by a line or by polling,
//! measured (resident memory from `/proc`), and always stopped, even on error.

use anyhow::{Context, Result, bail};
use process_harness::{Output, Process, Signal, Transcript, Unsaid};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use process_harness::{pss_mib, rss_mib};

/// A child process, killed when dropped.
pub struct Proc {
    process: Process,
    stdout: Transcript,
}

impl Proc {
    /// Starts `program args`; stdout is read (see [`Proc::lines_until`]), stderr goes to
    /// `log`.
    pub fn spawn(name: &str, program: &Path, args: &[String], log: &Path) -> Result<Self> {
        let mut command = std::process::Command::new(program);
        command.args(args);
        let stdout = Transcript::new();
        let process = Process::start(
            name,
            command,
            Output::Kept(stdout.clone()),
            Output::Log(log.to_owned()),
        )
        .with_context(|| format!("starting {name} ({})", program.display()))?;
        Ok(Self { process, stdout })
    }

    pub fn name(&self) -> &str {
        self.process.name()
    }

    /// Whether the process has exited already (a failed start, say).
    pub fn exited(&mut self) -> bool {
        self.process.exit_status().is_some()
    }

    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Reads stdout up to and including the first line containing `needle`.
    pub async fn lines_until(&mut self, needle: &str, timeout: Duration) -> Result<Vec<String>> {
        let (stdout, wanted) = (self.stdout.clone(), needle.to_owned());
        let found = tokio::task::spawn_blocking(move || {
            stdout.wait_for_line(|line| line.contains(&wanted), timeout)
        })
        .await?;
        let name = self.name();
        match found {
            Ok(lines) => Ok(lines),
            Err(Unsaid::Ended) => bail!("{name} exited before printing {needle:?}"),
            Err(Unsaid::TimedOut(_)) => {
                bail!("{name} did not print {needle:?} within {timeout:?}")
            }
        }
    }

    /// Resident memory (VmRSS) in MiB, from `/proc/<pid>/status`.
    pub fn rss_mib(&self) -> Option<f64> {
        rss_mib(self.pid())
    }

    /// SIGTERM, then SIGKILL if it has not exited within 5 s.
    pub async fn stop(self) {
        let _ = tokio::task::spawn_blocking(move || {
            self.process.stop(Signal::Terminate, Duration::from_secs(5))
        })
        .await;
    }
}

/// Parses the address out of a `... http://ADDR ...` line.
pub fn addr_in(line: &str) -> Result<SocketAddr> {
    let start = line.find("http://").context("no http:// in line")? + "http://".len();
    let rest = &line[start..];
    let end = rest
        .find(|c: char| c.is_whitespace() || c == '/')
        .unwrap_or(rest.len());
    rest[..end]
        .parse()
        .with_context(|| format!("no address in {line:?}"))
}

/// A loopback port nothing listens on right now.
pub fn free_port() -> Result<u16> {
    Ok(process_harness::free_port()?)
}

/// Polls `GET url` until it answers 200; returns how long that took.
pub async fn wait_ok(
    client: &service_client::HttpClient,
    url: &str,
    timeout: Duration,
) -> Result<Duration> {
    let started = Instant::now();
    loop {
        if let Ok(r) = client.send(hyper::Method::GET, url, None, None).await
            && r.status == 200
        {
            return Ok(started.elapsed());
        }
        if started.elapsed() > timeout {
            bail!("{url} did not answer 200 within {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// A fresh, empty directory under `root`.
pub fn fresh_dir(root: &Path, name: &str) -> Result<PathBuf> {
    let dir = root.join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("clearing {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Puts the component `wasm` into a models directory as `to`: a hard link where both are on
/// one file system, else a copy. Not a symbolic link: `up` refuses those (a link in a models
/// directory could point anywhere).
pub fn place_component(wasm: &Path, to: &Path) -> Result<()> {
    if std::fs::hard_link(wasm, to).is_err() {
        std::fs::copy(wasm, to)
            .with_context(|| format!("copying {} to {}", wasm.display(), to.display()))?;
    }
    Ok(())
}

/// A command run to its end: wall time from spawn to exit, the highest resident memory seen
/// (VmHWM, sampled every 10 ms), and what it printed on standard output.
pub struct Finished {
    pub seconds: f64,
    pub peak_rss_mib: Option<f64>,
    pub stdout: String,
}

/// Runs `program args` to its end, its standard error going to `log`; an exit other than 0
/// is an error that names the log.
pub async fn run_to_end(
    name: &str,
    program: &Path,
    args: &[String],
    log: &Path,
) -> Result<Finished> {
    let started = Instant::now();
    let proc = Proc::spawn(name, program, args, log)?;
    let (status, peak, ended, stdout) = tokio::task::spawn_blocking(move || {
        let pid = proc.pid();
        let mut peak = None;
        let status = loop {
            // The high-water mark only grows, so the last sample before the exit is the peak
            // unless the process grew in its last 10 ms.
            if let Some(kib) = status_field_kib(pid, "VmHWM:") {
                peak = Some(kib / 1024.0);
            }
            if let Some(status) = proc.process.wait(Duration::from_millis(10)) {
                break status;
            }
        };
        let ended = proc.process.exited_at().unwrap_or_else(Instant::now);
        // The rest of what it printed, read by the time its pipe closed.
        proc.stdout.wait_for_end(Duration::from_secs(10));
        (status, peak, ended, proc.stdout.text())
    })
    .await?;
    let seconds = ended.duration_since(started).as_secs_f64();
    if !status.success() {
        bail!("{name} failed ({status}); see {}", log.display());
    }
    Ok(Finished {
        seconds,
        peak_rss_mib: peak,
        stdout,
    })
}

/// A `kB` field of `/proc/<pid>/status` (`VmRSS:`, `VmHWM:`).
pub fn status_field_kib(pid: u32, field: &str) -> Option<f64> {
    let field = field.trim_end_matches(':');
    process_harness::status_kib(pid, field).map(|kib| kib as f64)
}
