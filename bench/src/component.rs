//! Section `component`: what deploying the ONNX model costs before it serves. The generic
//! component's size and cold compile time (`runtime-host compile` into an empty cache), and
//! the solubility snapshot's (`runtime-host snapshot`, which compiles the instrumented
//! component, runs the load and writes the snapshot). Spin's side (the snapshot under
//! `spin up`) is measured with the solubility load (see `spin.rs`).

use super::peers::Paths;
use super::procs;
use super::report::Report;
use super::section::{Section, no_targets, prints_nothing};
use anyhow::{Context, Result};
use std::process::Command;
use std::time::Instant;

pub const SECTION: Section = Section {
    name: "component",
    about: "the ONNX component's size, compile time and snapshot",
    run: |b, r| Box::pin(async move { deploy_costs(b.paths, b.args.quick, r) }),
    targets: no_targets,
    print: prints_nothing,
};

pub fn deploy_costs(paths: &Paths, quick: bool, report: &mut Report) -> Result<()> {
    if quick {
        // A smoke run checks that the commands work on the small molprop component: the
        // ONNX one's cold compiles and snapshot take half a minute on two cores.
        let molprop = paths.component("molprop")?;
        let cache = procs::fresh_dir(&paths.work, "component-cache")?;
        for tier in ["baseline", "optimized"] {
            let out = Command::new(&paths.host)
                .args(["compile", "--tier", tier])
                .arg(&molprop)
                .arg("--cache-dir")
                .arg(&cache)
                .output()
                .context("running runtime-host compile")?;
            anyhow::ensure!(
                out.status.success(),
                "runtime-host compile --tier {tier}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        report.notes.push(
            "section component: molprop compiled by both tiers (--quick: the ONNX component's \
             figures need a full run)"
                .into(),
        );
        return Ok(());
    }
    let onnx = paths.component("onnx_model")?;
    let size = std::fs::metadata(&onnx)?.len();
    let cache = procs::fresh_dir(&paths.work, "component-cache")?;
    let data = procs::fresh_dir(&paths.work, "component-data")?;
    let run = |args: &[&std::ffi::OsStr]| -> Result<f64> {
        let started = Instant::now();
        let out = Command::new(&paths.host)
            .args(args)
            .arg("--cache-dir")
            .arg(&cache)
            .arg("--data-dir")
            .arg(&data)
            .output()
            .context("running runtime-host")?;
        anyhow::ensure!(
            out.status.success(),
            "runtime-host {:?}: {}",
            args,
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(started.elapsed().as_secs_f64())
    };
    let compile = run(&["compile".as_ref(), onnx.as_os_str()])?;
    let cached = run(&["compile".as_ref(), onnx.as_os_str()])?;
    let baseline = run(&[
        "compile".as_ref(),
        "--tier".as_ref(),
        "baseline".as_ref(),
        onnx.as_os_str(),
    ])?;
    let model = std::fs::canonicalize("models/solubility")
        .context("models/solubility (run the bench from the repository root)")?;
    let mount = format!("{}:/model", model.display());
    let output = paths.work.join("solubility-snapshot.wasm");
    let snapshot = run(&[
        "snapshot".as_ref(),
        onnx.as_os_str(),
        "--dir".as_ref(),
        mount.as_ref(),
        "-o".as_ref(),
        output.as_os_str(),
    ])?;
    let snapshot_size = std::fs::metadata(&output)?.len();
    let snapshot_compile = run(&["compile".as_ref(), output.as_os_str()])?;
    report.notes.push(format!(
        "ONNX component: {:.1} MB, cold compile {compile:.2} s (Winch's baseline code: \
         {baseline:.2} s), from the cache {cached:.2} s; \
         solubility snapshot: made in {snapshot:.2} s (instrumented compile + load), \
         {:.1} MB, cold compile {snapshot_compile:.2} s (2 cores, `runtime-host compile` \
         into an empty cache)",
        size as f64 / 1e6,
        snapshot_size as f64 / 1e6,
    ));
    Ok(())
}
