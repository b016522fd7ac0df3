//! Pre-initialized snapshots: `runtime-host snapshot` writes a model component that starts
//! with its model loaded and serves without its files, answering exactly as the component
//! loading its directory does; snapshots are cached by component and files, and a change to
//! the files makes a new one; a deployment has a child process do the compiling and
//! snapshotting the cache lacks; a component without the entry point is refused by name.

use e2e_tests::{
    Client, Host, HostBuilder, component, model_dir, shared_cache_dir, snapshot, temp_dir,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The snapshots cached under `cache`.
fn cached_snapshots(cache: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(cache.join("snapshots")) {
        Ok(entries) => entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
            .collect(),
        Err(_) => Vec::new(),
    }
}

async fn answers(c: &Client, host: &Host, molecules: &[&str]) -> Vec<Value> {
    let mut out = vec![c.get(&host.url("/info")).await.value()];
    for smiles in molecules {
        let r = c
            .post_json(
                &host.url("/predict"),
                &json!({"input_type": "text", "data": {"text": smiles}}),
                None,
            )
            .await;
        assert_eq!(r.status, 200, "{smiles}: {}", r.text());
        let mut v = r.value();
        v.as_object_mut().unwrap().remove("computation_time_ms");
        out.push(v);
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_snapshot_serves_without_its_files_exactly_as_the_component_with_them() {
    let work = temp_dir();
    let cache = work.path().join("cache");
    let output = work.path().join("solubility.wasm");
    let (ok, said) = snapshot(
        &component("onnx-model"),
        Some(&model_dir("solubility")),
        &output,
        &cache,
    );
    assert!(ok, "{said}");
    assert!(said.contains("pre-initialized"), "{said}");
    assert_eq!(cached_snapshots(&cache).len(), 1, "one snapshot cached");

    // The snapshot with no mount at all, one fresh instance per request (as Spin serves),
    // beside the generic component loading the directory.
    let (a, b) = (temp_dir(), temp_dir());
    let snap = HostBuilder::new(output.clone(), a.path())
        .shared_compile_cache()
        .arg("--instance-reuse")
        .arg("1")
        .start();
    let plain = HostBuilder::new(component("onnx-model"), b.path())
        .shared_compile_cache()
        .mount(&model_dir("solubility"), "/model")
        .start();
    let c = Client::new();
    let health = c.get(&snap.url("/health")).await;
    assert_eq!(health.status, 200, "{}", health.text());
    let molecules = [
        "CCO",
        "c1ccccc1O",
        "CC(=O)Oc1ccccc1C(=O)O",
        "not a molecule",
    ];
    let from_snapshot = answers(&c, &snap, &molecules).await;
    assert_eq!(from_snapshot, answers(&c, &plain, &molecules).await);
    assert_eq!(from_snapshot[1]["success"], true, "{}", from_snapshot[1]);
    assert_eq!(from_snapshot[4]["success"], false, "{}", from_snapshot[4]);

    // Many fresh instances in a row still start loaded (no files to load from here).
    for _ in 0..50 {
        let r = c
            .post_json(
                &snap.url("/predict"),
                &json!({"input_type": "text", "data": {"text": "CCN"}}),
                None,
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    // Counters are shared by every instance of the deployment.
    let metrics = c.get(&snap.url("/metrics")).await.value();
    assert_eq!(metrics["requests_served"], json!(54), "{metrics}");
}

#[test]
fn changed_files_make_a_new_snapshot_and_the_same_files_reuse_it() {
    let work = temp_dir();
    let cache = work.path().join("cache");
    let dir = work.path().join("iris");
    std::fs::create_dir(&dir).unwrap();
    for entry in std::fs::read_dir(model_dir("iris")).unwrap().flatten() {
        std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
    }
    let out = |n: &str| work.path().join(n);
    let (ok, said) = snapshot(&component("onnx-model"), Some(&dir), &out("1.wasm"), &cache);
    assert!(ok, "{said}");
    let (ok, said) = snapshot(&component("onnx-model"), Some(&dir), &out("2.wasm"), &cache);
    assert!(ok, "{said}");
    assert_eq!(
        cached_snapshots(&cache).len(),
        1,
        "the same files: the same snapshot"
    );
    assert_eq!(
        std::fs::read(out("1.wasm")).unwrap(),
        std::fs::read(out("2.wasm")).unwrap()
    );

    let manifest = dir.join("model.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replacen("[info]", "[info]\n# edited\n", 1)).unwrap();
    let (ok, said) = snapshot(&component("onnx-model"), Some(&dir), &out("3.wasm"), &cache);
    assert!(ok, "{said}");
    assert_eq!(
        cached_snapshots(&cache).len(),
        2,
        "changed files: a new snapshot"
    );
    // The component prepared for initialization is the same for any files: compiled for
    // the first snapshot only, so a new model version does not wait for a compile.
    assert_eq!(
        compiled_artifacts(&cache).len(),
        1,
        "one compiled artifact for three snapshots"
    );
}

/// A first deployment has a child process snapshot and compile the model (so that the
/// compiler's memory leaves with it: host-core's runtime/preinit/child.rs) and then serves from
/// the cache it wrote; the next deployment finds everything there and starts no child.
/// Both answer alike.
#[tokio::test]
async fn a_first_deployment_prepares_in_a_child_process_and_the_next_from_the_cache() {
    let work = temp_dir();
    let cache = work.path().join("cache").display().to_string();
    let start = || {
        let data = temp_dir();
        let host = HostBuilder::new(component("onnx-model"), data.path())
            .env("RUNTIME_HOST_CACHE_DIR", &cache)
            .mount(&model_dir("iris"), "/model")
            .start();
        (host, data)
    };
    let c = Client::new();
    let flowers = [json!([5.1, 3.5, 1.4, 0.2]), json!([6.7, 3.0, 5.2, 2.3])];
    let predict = async |host: &Host| {
        let mut out = vec![c.get(&host.url("/health")).await.value()];
        for features in &flowers {
            let body = json!({"input_type": "tabular", "data": {"features": features}});
            let r = c.post_json(&host.url("/predict"), &body, None).await;
            assert_eq!(r.status, 200, "{}", r.text());
            let mut v = r.value();
            v.as_object_mut().unwrap().remove("computation_time_ms");
            out.push(v);
        }
        out
    };

    let (first, _data) = start();
    let cold = predict(&first).await;
    // It answers from Winch's code at once; the child prepares the snapshot meanwhile.
    e2e_tests::until_said(
        "the optimized snapshot in place",
        Duration::from_secs(240),
        || first.output(),
        "optimized code in place",
    )
    .await;
    assert_eq!(
        predict(&first).await,
        cold,
        "the same answers from either code"
    );
    let said = first.output();
    assert!(said.contains("in a child process"), "{said}");
    assert!(!said.contains("doing it here"), "{said}");
    assert_eq!(cached_snapshots(Path::new(&cache)).len(), 1, "{said}");
    first.stop();

    let (second, _data) = start();
    assert_eq!(predict(&second).await, cold);
    let said = second.output();
    assert!(!said.contains("in a child process"), "{said}");
    assert!(
        !said.contains("Winch"),
        "the optimized code from the cache: {said}"
    );
    assert_eq!(cold[1]["success"], true, "{}", cold[1]);
}

/// The compiled components cached under `cache` (`crates/host-runtime/src/compiled.rs`).
fn compiled_artifacts(cache: &Path) -> Vec<PathBuf> {
    let dirs = std::fs::read_dir(cache).unwrap().flatten();
    dirs.filter(|d| d.file_name().to_string_lossy().starts_with("compiled-"))
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|f| f.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .collect()
}

#[test]
fn a_component_without_the_entry_point_is_refused_by_name() {
    let work = temp_dir();
    let output = work.path().join("molprop.wasm");
    let (ok, said) = snapshot(&component("molprop"), None, &output, &shared_cache_dir());
    assert!(!ok, "{said}");
    assert!(said.contains("edge:model/preinit"), "{said}");
    assert!(!output.exists());
}
