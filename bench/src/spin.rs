//! Spin's side of the snapshot (issue 27). Where a `spin` binary is on the PATH, `spin up`
//! serves solubility twice beside the host: the generic ONNX component with the model
//! directory mounted (loading the model in every request's fresh instance, as today's
//! `spin.toml` does) and the pre-initialized snapshot without a mount. Where there is no
//! `spin`, the report says so and nothing is measured.

use super::Sides;
use super::peers::Paths;
use super::procs::{Proc, free_port, wait_ok};
use super::report::Report;
use anyhow::{Context, Result};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// The `spin` on the PATH and its version, if there is one.
fn spin_version() -> Option<String> {
    let out = std::process::Command::new("spin")
        .arg("--version")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Adds sides `spin-generic` and `spin-snapshot` for the model directory `model`, or notes
/// why not.
pub async fn add_solubility_sides(
    paths: &Paths,
    model: &Path,
    sides: &mut Sides,
    report: &mut Report,
) {
    let Some(version) = spin_version() else {
        report.notes.push(
            "spin is not on the PATH: solubility under `spin up` (generic component vs \
             snapshot) was not measured; runtime-host --instance-reuse 1 is the same model of a \
             fresh instance per request"
                .into(),
        );
        return;
    };
    match spin_sides(paths, model, sides).await {
        Ok(()) => report.notes.push(format!(
            "{version}: spin-generic is `spin up` of the ONNX component with the model \
             directory mounted, spin-snapshot of `runtime-host snapshot`'s output without it"
        )),
        Err(e) => report.notes.push(format!(
            "{version} found, but serving under it failed: {e:#}"
        )),
    }
}

async fn spin_sides(paths: &Paths, model: &Path, sides: &mut Sides) -> Result<()> {
    let generic = paths.component("onnx_model")?;
    let snapshot = paths.work.join("spin-solubility-snapshot.wasm");
    let mount = format!("{}:/model", model.display());
    let out = tokio::process::Command::new(&paths.host)
        .arg("snapshot")
        .arg(&generic)
        .args(["--dir", &mount, "-o"])
        .arg(&snapshot)
        .output()
        .await
        .context("running runtime-host snapshot")?;
    anyhow::ensure!(
        out.status.success(),
        "runtime-host snapshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (proc, addr) = spin_up(paths, "spin-generic", &generic, Some(model)).await?;
    sides.push("spin-generic", proc, addr);
    let (proc, addr) = spin_up(paths, "spin-snapshot", &snapshot, None).await?;
    sides.push("spin-snapshot", proc, addr);
    Ok(())
}

/// `spin up` of a one-component app serving `source` at every path, with `model` mounted at
/// `/model` when given; waits for its `/health`.
async fn spin_up(
    paths: &Paths,
    name: &str,
    source: &Path,
    model: Option<&Path>,
) -> Result<(Proc, SocketAddr)> {
    let dir = super::procs::fresh_dir(&paths.work, name)?;
    let files = model.map_or(String::new(), |m| {
        format!(
            "files = [{{ source = {}, destination = \"/model\" }}]\n",
            toml_string(m)
        )
    });
    let manifest = format!(
        "spin_manifest_version = 2\n\n\
         [application]\nname = \"bench-{name}\"\nversion = \"0.1.0\"\n\n\
         [[trigger.http]]\nroute = \"/...\"\ncomponent = \"model\"\n\n\
         [component.model]\nsource = {}\n{files}key_value_stores = [\"default\"]\n",
        toml_string(source)
    );
    let manifest_file = dir.join("spin.toml");
    std::fs::write(&manifest_file, manifest)?;
    let addr = SocketAddr::from(([127, 0, 0, 1], free_port()?));
    let args = [
        "up".to_owned(),
        "--from".into(),
        manifest_file.display().to_string(),
        "--listen".into(),
        addr.to_string(),
        "--state-dir".into(),
        dir.join(".spin").display().to_string(),
    ];
    let proc = Proc::spawn(name, Path::new("spin"), &args, &paths.log(name))?;
    let client = service_client::HttpClient::new(Duration::from_secs(5));
    wait_ok(
        &client,
        &format!("http://{addr}/health"),
        Duration::from_secs(180),
    )
    .await
    .with_context(|| format!("see {}", paths.log(name).display()))?;
    Ok((proc, addr))
}

/// `path` as a TOML basic string.
fn toml_string(path: &Path) -> String {
    serde_json::to_string(&path.display().to_string()).expect("a string serializes")
}
