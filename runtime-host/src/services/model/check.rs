//! `runtime-host model check`: a model directory checked by what a deploy runs, so that what
//! `check` passes deploys. First the manifest and the files it names ([`check_model_dir`],
//! what `up` runs before it compiles anything); then the ONNX model component launched with
//! the directory mounted at /model as `up` and `serve` launch it, and its self-test
//! ([`SelfTestPass::of`]): the graph loaded, every operator resolved, the labels and ranges
//! against the graph, every test example predicted. Nothing registers, no port is bound. (It
//! said "ok" before for directories a deploy then refused, one problem at a time: issue 57.)

use crate::services::launch::Launcher;
use crate::services::model::manifest::{check_model_dir, summary};
use crate::services::model::self_test::SelfTestPass;
use crate::services::model::spec::model_spec;
use crate::services::model::versions::version_blocking;
use host_core::capabilities::keyvalue::KeyValue;
use std::path::Path;
use std::time::Duration;

/// What checking one directory found.
pub enum Verdict {
    /// It deploys: the manifest's summary.
    Passes(String),
    /// Its manifest or files have problems (each a line naming the file and field); nothing
    /// was launched.
    Manifest(Vec<String>),
    /// The deploy's own steps refused it: what failed (loading, or the self-test with the
    /// status `/health` answered), then the reason's lines as the component gave them.
    Deploy { stage: String, reasons: Vec<String> },
}

/// Checks `dir` as a deploy would, launching the ONNX model component with `launcher` (its
/// self-test within `deadline`).
pub async fn check_dir(launcher: &Launcher, dir: &Path, deadline: Duration) -> Verdict {
    let manifest = match check_model_dir(dir) {
        Ok(m) => m,
        Err(problems) => return Verdict::Manifest(problems),
    };
    let loading = |e: anyhow::Error| Verdict::Deploy {
        stage: "it could not be loaded".into(),
        reasons: lines(&format!("{e:#}")),
    };
    let spec = match model_spec(dir) {
        Ok(spec) => spec,
        Err(e) => return loading(e),
    };
    // As `up` grants a model directory: its mount, its outbound hosts, its version; its
    // stores in memory (a check keeps no state).
    let version = match version_blocking(dir).await {
        Ok(v) => v,
        Err(e) => return loading(e),
    };
    let vars = [("model_version", version)];
    let grants = match launcher.grants(KeyValue::in_memory(), &vars, &spec.access()) {
        Ok(g) => g,
        Err(e) => return loading(e),
    };
    let loaded = match launcher.launch(&spec.component, grants, Vec::new()).await {
        Ok(loaded) => loaded,
        Err(e) => return loading(e),
    };
    match SelfTestPass::of(loaded, deadline).await {
        Ok(_) => Verdict::Passes(summary(&manifest)),
        Err(e) => {
            let text = format!("{e:#}");
            let (stage, why) = text.split_once('\n').unwrap_or((&text, ""));
            Verdict::Deploy {
                stage: stage.trim_end_matches(':').to_owned(),
                reasons: lines(why),
            }
        }
    }
}

/// The non-empty lines of `text`.
fn lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}
