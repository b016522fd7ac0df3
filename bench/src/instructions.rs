//! Section `instructions`: the instructions executed per request (valgrind's callgrind), by
//! the host and by the native peer, for `/health` and molprop's `/predict`.
//!
//! Why beside requests per second: on a shared two-core machine the same build's CPU per
//! request moves by 10-30 % from one minute to the next, which hides a change of a few per
//! cent. A count of instructions repeats to within a fraction of a per cent. It leaves out
//! the kernel and what an instruction costs (a cache miss counts one), so it shows where a
//! server's own work goes, not how fast it answers.
//!
//! How: each server runs under `valgrind --tool=callgrind`; after a warm-up the counters are
//! zeroed (`callgrind_control --zero`), the bench's load generator sends its requests, and
//! the counters are dumped (`--dump`): instructions in the dump / requests answered. For the
//! host, instructions in code without a symbol are the guest's (wasmtime's compiled
//! WebAssembly); the rest is the host's own. The host runs with `--max-concurrency 1`:
//! valgrind cannot reserve the address space of the full instance pool, and one request at
//! a time is what a warm instance serves anyway.

use super::compare::predict_calls;
use super::load::{self, Call};
use super::peers::{self, ModelUnderTest, Paths};
use super::procs::{self, Proc};
use super::report::InstructionRow;
use super::section::{Section, no_targets};
use anyhow::{Context, Result, bail};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Connections of the load while counting: one, as the host with `--max-concurrency 1`
/// answers more at once with 503 (valgrind runs one thread at a time anyway).
const CONNECTIONS: usize = 1;

pub const SECTION: Section = Section {
    name: "instructions",
    about: "instructions per request of the host and the native peer under valgrind's callgrind; skipped without valgrind",
    run: |b, r| {
        Box::pin(async move {
            let (rows, notes) = (&mut r.instructions, &mut r.notes);
            instructions(b.paths, b.molecules, b.args.quick, rows, notes).await
        })
    },
    targets: no_targets,
    print: |r| print(&r.instructions),
};

pub async fn instructions(
    paths: &Paths,
    molecules: &[String],
    quick: bool,
    rows_out: &mut Vec<InstructionRow>,
    notes: &mut Vec<String>,
) -> Result<()> {
    if !["valgrind", "callgrind_control"]
        .iter()
        .all(|p| local_redis::program_runs(p))
    {
        notes.push(
            "section instructions skipped: valgrind is not installed (apt-get install valgrind)"
                .into(),
        );
        return Ok(());
    }
    let duration = Duration::from_secs(if quick { 1 } else { 5 });
    let loads: [(&str, Arc<[Call]>); 3] = [
        ("/health", Arc::new([Call::get("/health")])),
        ("/predict logp", predict_calls(molecules, "logp")),
        ("/predict all", predict_calls(molecules, "all")),
    ];
    let (reg, reg_addr) =
        peers::registry(paths, "instructions-registry", "22300-22399", &[]).await?;

    eprintln!("instructions per request: the host under callgrind ...");
    let out = fresh_file(&paths.work, "callgrind-host.out")?;
    let data = procs::fresh_dir(&paths.work, "instructions-host")?;
    let (host, addr, _) = peers::host_model(
        &under_callgrind(paths, &out),
        "instructions-host",
        &ModelUnderTest::molprop(paths)?,
        reg_addr,
        &data,
        &["--max-concurrency", "1"],
    )
    .await?;
    let measured = count_per_request(&host, addr, &out, &loads, duration).await;
    host.stop().await;
    rows_out.extend(rows("host", measured?));

    eprintln!("instructions per request: the native peer under callgrind ...");
    let out = fresh_file(&paths.work, "callgrind-native.out")?;
    let (native, addr) = peers::native(&under_callgrind(paths, &out)).await?;
    let measured = count_per_request(&native, addr, &out, &loads, duration).await;
    native.stop().await;
    rows_out.extend(rows("native", measured?));
    reg.stop().await;
    Ok(())
}

/// What one load counted: (load, requests, instructions, of which in unnamed code).
type Counted = (String, u64, u64, u64);

fn rows(side: &str, counted: Vec<Counted>) -> impl Iterator<Item = InstructionRow> + '_ {
    counted
        .into_iter()
        .map(move |(load, requests, total, unnamed)| InstructionRow {
            load,
            side: side.into(),
            requests,
            per_request: total as f64 / requests.max(1) as f64,
            guest_per_request: (side == "host").then(|| unnamed as f64 / requests.max(1) as f64),
        })
}

/// `paths` with the servers run under callgrind, its dumps named after `out`.
fn under_callgrind(paths: &Paths, out: &Path) -> Paths {
    Paths {
        wrapper: vec![
            "valgrind".into(),
            "--tool=callgrind".into(),
            format!("--callgrind-out-file={}", out.display()),
        ],
        ..paths.clone()
    }
}

async fn count_per_request(
    server: &Proc,
    addr: SocketAddr,
    out: &Path,
    loads: &[(&str, Arc<[Call]>)],
    duration: Duration,
) -> Result<Vec<Counted>> {
    let mut counted = Vec::new();
    for (dumps, (name, calls)) in (1..).zip(loads) {
        load::run(addr, CONNECTIONS, duration / 4, calls.clone()).await?;
        control(server, "--zero").await?;
        let m = load::run(addr, CONNECTIONS, duration, calls.clone()).await?;
        control(server, "--dump").await?;
        if m.errors * 100 > m.ok {
            bail!(
                "{name}: {} of {} requests failed under callgrind",
                m.errors,
                m.ok + m.errors
            );
        }
        let dump = PathBuf::from(format!("{}.{dumps}", out.display()));
        let text = std::fs::read_to_string(&dump)
            .with_context(|| format!("reading callgrind's dump {}", dump.display()))?;
        let (total, unnamed) = costs(&text)?;
        // A failed request did work too: count it among the requests (a few in thousands).
        counted.push((name.to_string(), m.ok + m.errors, total, unnamed));
    }
    Ok(counted)
}

async fn control(server: &Proc, command: &str) -> Result<()> {
    let status = tokio::process::Command::new("callgrind_control")
        .args([command, &server.pid().to_string()])
        .stdout(std::process::Stdio::null())
        .status()
        .await
        .context("running callgrind_control")?;
    if !status.success() {
        bail!("callgrind_control {command} failed ({status})");
    }
    Ok(())
}

/// The dump's total instructions, and those in functions without a name (callgrind names
/// them by address, `0x...`: code generated at run time).
fn costs(dump: &str) -> Result<(u64, u64)> {
    let mut total = None;
    let mut unnamed = 0;
    let mut names = std::collections::HashMap::new();
    let mut in_unnamed = false;
    let mut after_calls = false;
    for line in dump.lines() {
        if let Some(rest) = line.strip_prefix("totals:") {
            total = rest.trim().parse::<u64>().ok();
        } else if let Some(rest) = line.strip_prefix("fn=") {
            // `fn=(id) name` the first time, `fn=(id)` after.
            let (id, name) = rest.split_once(' ').unwrap_or((rest, ""));
            if !name.is_empty() {
                names.insert(id.to_owned(), name.starts_with("0x"));
            }
            in_unnamed = names.get(id).copied().unwrap_or(false);
        } else if let Some(rest) = line.strip_prefix("cfn=") {
            // A callee may be named here first.
            if let Some((id, name)) = rest.split_once(' ') {
                names.insert(id.to_owned(), name.starts_with("0x"));
            }
        } else if line.starts_with("calls=") {
            after_calls = true;
        } else if line.starts_with(|c: char| c.is_ascii_digit() || "+-*".contains(c)) {
            // A cost line: position, then instructions. The one after `calls=` is the
            // call's inclusive cost, already counted where it was spent.
            if !std::mem::take(&mut after_calls) && in_unnamed {
                unnamed += line
                    .split_whitespace()
                    .nth(1)
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
    }
    Ok((
        total.context("no totals: line in callgrind's dump")?,
        unnamed,
    ))
}

/// `dir/name`, with any earlier file of that name and its dumps removed.
fn fresh_file(dir: &Path, name: &str) -> Result<PathBuf> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with(name) {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(dir.join(name))
}

/// The section's lines in the report.
pub fn print(rows: &[InstructionRow]) {
    if rows.is_empty() {
        return;
    }
    println!("\ninstructions per request (callgrind; user space only, one request at a time)");
    println!(
        "  {:<14} {:>12} {:>12} {:>12} {:>12}",
        "load", "host", "of it guest", "native", "host/native"
    );
    let loads: Vec<&str> = rows.iter().fold(Vec::new(), |mut seen, r| {
        if !seen.contains(&r.load.as_str()) {
            seen.push(&r.load);
        }
        seen
    });
    for load in loads {
        let find = |side: &str| rows.iter().find(|r| r.load == load && r.side == side);
        let (host, native) = (find("host"), find("native"));
        let cell = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.0}", v));
        let ratio = match (host, native) {
            (Some(h), Some(n)) if n.per_request > 0.0 => {
                format!("{:.2}x", h.per_request / n.per_request)
            }
            _ => "-".into(),
        };
        println!(
            "  {load:<14} {:>12} {:>12} {:>12} {:>12}",
            cell(host.map(|h| h.per_request)),
            cell(host.and_then(|h| h.guest_per_request)),
            cell(native.map(|n| n.per_request)),
            ratio
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_split_unnamed_code_and_skip_inclusive_call_costs() {
        let dump = "\
events: Ir
fn=(1) runtime_host::serve
0 100
+2 50
cfn=(2) 0x0000000005600000
calls=3 0
0 900
fn=(2)
0 700
fn=(3) malloc
* 30
totals: 880
";
        // Self costs: serve 150, the unnamed function 700, malloc 30; the 900 after
        // `calls=` is the call's inclusive cost.
        assert_eq!(costs(dump).unwrap(), (880, 700));
    }
}
