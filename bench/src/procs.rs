//! The processes a benchmark starts: spawned with their output captured, found ready by
//! polling, measured (resident memory from `/proc`), and always stopped, even on error.

use anyhow::{Context, Result, bail};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// A child process, killed when dropped.
pub struct Proc {
    pub name: String,
    child: Child,
}

impl Proc {
    /// Starts `program args`; stdout is piped (see [`Proc::line_containing`]), stderr goes
    /// to `log`.
    pub fn spawn(name: &str, program: &Path, args: &[String], log: &Path) -> Result<Self> {
        let log_file =
            std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {name} ({})", program.display()))?;
        Ok(Self {
            name: name.to_owned(),
            child,
        })
    }

    /// Whether the process has exited already (a failed start, say).
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    /// Reads stdout up to and including the first line containing `needle`.
    pub async fn lines_until(&mut self, needle: &str, timeout: Duration) -> Result<Vec<String>> {
        let stdout = self.child.stdout.take().context("stdout already taken")?;
        let mut lines = BufReader::new(stdout).lines();
        let mut seen = Vec::new();
        let found = tokio::time::timeout(timeout, async {
            while let Some(line) = lines.next_line().await? {
                let done = line.contains(needle);
                seen.push(line);
                if done {
                    return Ok::<_, anyhow::Error>(true);
                }
            }
            Ok(false)
        })
        .await;
        // Keep draining so the child never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        match found {
            Ok(Ok(true)) => Ok(seen),
            Ok(Ok(false)) => bail!("{} exited before printing {needle:?}", self.name),
            Ok(Err(e)) => Err(e),
            Err(_) => bail!("{} did not print {needle:?} within {timeout:?}", self.name),
        }
    }

    /// Resident memory (VmRSS) in MiB, from `/proc/<pid>/status`.
    pub fn rss_mib(&self) -> Option<f64> {
        rss_mib(self.pid())
    }

    /// SIGTERM, then SIGKILL if it has not exited within 5 s.
    pub async fn stop(mut self) {
        let pid = self.pid().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status().await;
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

pub fn rss_mib(pid: u32) -> Option<f64> {
    status_field_kib(pid, "VmRSS:").map(|kib| kib / 1024.0)
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
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
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
    let mut proc = Proc::spawn(name, program, args, log)?;
    let mut stdout = proc.child.stdout.take().context("stdout already taken")?;
    let reader = tokio::spawn(async move {
        let mut text = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut stdout, &mut text)
            .await
            .map(|_| text)
    });
    let pid = proc.pid();
    let mut peak = None;
    let status = loop {
        // The high-water mark only grows, so the last sample before the exit is the peak
        // unless the process grew in its last 10 ms.
        if let Some(kib) = status_field_kib(pid, "VmHWM:") {
            peak = Some(kib / 1024.0);
        }
        tokio::select! {
            status = proc.child.wait() => break status?,
            () = tokio::time::sleep(Duration::from_millis(10)) => {}
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    let stdout = reader.await??;
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
/// Proportional set size in MiB (`/proc/<pid>/smaps_rollup`): resident memory with each
/// shared page counted once, however many mappings show it. VmRSS counts a page once per
/// mapping, so a snapshot's copy-on-write image mapped by several instances counts several
/// times there.
pub fn pss_mib(pid: u32) -> Option<f64> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let line = rollup.lines().find(|l| l.starts_with("Pss:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

pub fn status_field_kib(pid: u32, field: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
