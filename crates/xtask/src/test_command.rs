//! `cargo xtask test`: the services and model files the tests need, fetched while the build
//! runs, then every test binary (several at a time) and the Redis pass, totalled.

use super::{
    cargo, deb, each_output_line, install_models, optional_tools, root, runner, services,
    test_binaries,
};
use std::process::Command;

/// What the test command needs beside the build, fetched while it compiles: the optional
/// tools ([`optional_tools::OPTIONAL`]: Redis, the browser, ... whether each is here), and
/// the AI models' files.
pub struct Prerequisites {
    tools: optional_tools::Found,
}

/// Starts installing the tools and model files the tests need, on a thread of its own:
/// downloads and unpacking overlap the compile instead of following it.
pub fn fetch_prerequisites() -> std::thread::JoinHandle<Result<Prerequisites, String>> {
    std::thread::spawn(|| {
        let tools = optional_tools::Found::ensure(&root());
        install_models()?;
        Ok(Prerequisites { tools })
    })
}

/// Runs the workspace's native crates' tests (its `default-members`) in release, then (with
/// Redis) the chat, registry and model scenarios again with every host's store on Redis, and
/// ends with one `tests: N passed, M failed` line totalling every test binary, and a
/// `tests: SKIPPED ...` line for each optional tool it lacked.
///
/// With no arguments the test binaries run several at a time ([`runner`]); arguments go to
/// one plain `cargo test --release` (e.g. `--test e2e chat::api::`, or a test name), without
/// the Redis pass.
pub fn run(extra: &[String], prerequisites: Prerequisites) -> Result<(), String> {
    let Prerequisites { tools } = prerequisites;
    // CI can install every tool (it runs as root), so a skip there would hide a broken install.
    let in_ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
    let missing: Vec<&str> = tools.missing().map(|t| t.what).collect();
    if in_ci && !missing.is_empty() {
        return Err(format!(
            "CI runs every test, but {} could not be installed or found (see above); nothing \
             was skipped silently",
            missing.join(", ")
        ));
    }
    // Built once here, from the build just made, for the package's test to install.
    if tools.has(optional_tools::PACKAGE) {
        let started = std::time::Instant::now();
        deb::build()?;
        eprintln!(
            "xtask: the Debian packages built in {:?}",
            started.elapsed()
        );
    }
    // Tests that need a tool this command has fail, rather than skip, if it went missing.
    let env = tools.required();
    let redis = tools.has("redis-server");
    let totals = if extra.is_empty() {
        test_in_parallel(&env, redis)?
    } else {
        let mut one = cargo();
        one.args(["test", "--release", "--no-fail-fast"])
            .args(extra)
            .envs(env.iter().map(|(k, v)| (k, v)));
        run_tests(one)?
    };
    for (label, report) in &totals.failures {
        println!("\nxtask: why {label} failed: {report}");
    }
    println!("tests: {} passed, {} failed", totals.passed, totals.failed);
    for tool in tools.missing() {
        println!("tests: SKIPPED {}", tool.skipped);
    }
    if !totals.ok || totals.failed > 0 {
        return Err("tests failed".into());
    }
    if totals.passed == 0 {
        return Err("no test ran".into());
    }
    Ok(())
}

/// How many test binaries run at once: `XTASK_TEST_JOBS`, else one more than the cores (most
/// of a test's time is spent waiting on the servers it started).
fn test_jobs() -> usize {
    std::env::var("XTASK_TEST_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()) + 1)
}

/// Every test binary once (the end-to-end one a process per module), and the
/// [`services::REDIS_PASS`] modules once more on a Redis of their own, all in one pool.
/// `XTASK_TEST_ONLY=chat::api,host` keeps only the jobs whose label starts with one of those
/// (their Redis pass included): a module or a group run exactly as the whole run runs it.
fn test_in_parallel(env: &[(String, String)], redis: bool) -> Result<runner::Totals, String> {
    let mut build = cargo();
    // The same package selection as `cargo build --release` in [`build`], so cargo resolves
    // the same features and reuses every artifact.
    build.args(["test", "--release"]);
    let binaries = test_binaries::build(build)?;
    let mut groups = Vec::new();
    let mut labels = std::collections::BTreeSet::new();
    for binary in &binaries {
        if binary.name == services::BY_MODULE {
            let modules = test_binaries::modules(binary)?;
            labels.extend(modules.iter().map(|m| m.label.clone()));
            groups.extend(modules);
            continue;
        }
        // Unit tests of a library and of a binary may share a name: number the second.
        let mut label = binary.name.clone();
        let mut n = 1;
        while !labels.insert(label.clone()) {
            n += 1;
            label = format!("{}-{n}", binary.name);
        }
        groups.push(test_binaries::Group {
            label,
            binary: binary.clone(),
            tests: None,
        });
    }
    let mut jobs: Vec<runner::Job> = groups
        .iter()
        .filter_map(|group| {
            Some(runner::Job {
                alone: services::RUN_ALONE.contains(&group.label.as_str()),
                label: group.label.clone(),
                binary: group.binary.clone(),
                env: env.to_vec(),
                args: group.args(&[])?,
            })
        })
        .collect();
    let server = if redis {
        let server = services::pass_redis(&root().join("target/redis-pass"))?;
        eprintln!(
            "xtask: the Redis pass: {} again with every store on {}",
            services::REDIS_PASS.join(", "),
            server.url()
        );
        for name in services::REDIS_PASS {
            let group = groups.iter().find(|g| g.label == *name).ok_or(format!(
                "the Redis pass names {name}, which is no test module"
            ))?;
            let mut env = env.to_vec();
            env.push(("E2E_REDIS_URL".to_owned(), server.url()));
            // A module whose every test works on the SQLite file has nothing to run here.
            let Some(args) = group.args(services::SQLITE_ONLY) else {
                continue;
            };
            jobs.push(runner::Job {
                label: format!("{name}-on-redis"),
                binary: group.binary.clone(),
                env,
                args,
                alone: false,
            });
        }
        Some(server)
    } else {
        None
    };
    if let Ok(only) = std::env::var("XTASK_TEST_ONLY") {
        jobs.retain(|job| {
            only.split(',').map(str::trim).any(|part| {
                // A module or a group by its whole name: `tools::check` is not `check_oip`.
                let rest = job.label.strip_prefix(part);
                rest.is_some_and(|r| r.is_empty() || r.starts_with("::") || r.starts_with('-'))
            })
        });
    }
    let totals = runner::run(jobs, test_jobs(), &root().join("target/xtask-tests"));
    drop(server);
    totals
}

/// Runs one `cargo test`, echoing its output; returns what its test binaries added up to.
fn run_tests(mut cmd: Command) -> Result<runner::Totals, String> {
    // --show-output: the tables and figures that tests print belong in the log.
    cmd.args(["--", "--show-output"]);
    let mut output = String::new();
    let status = each_output_line(cmd, |line| {
        println!("{line}");
        output.push_str(&line);
        output.push('\n');
    })?;
    let (passed, failed) = runner::count(&output);
    let failures = if status.success() {
        Vec::new()
    } else {
        let report = runner::failure_report(&output, &status.to_string());
        vec![("cargo test".to_owned(), report)]
    };
    Ok(runner::Totals {
        passed,
        failed,
        ok: status.success(),
        failures,
    })
}
