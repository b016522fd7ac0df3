//! Generates host bindings for the two interfaces Spin components import that wasmtime's own
//! crates do not implement at Spin's versions: `wasi:keyvalue@0.2.0-draft2` (store, atomics,
//! batch) and `wasi:config/store@0.2.0-draft-2024-09-27`.
//!
//! Their WIT is not copied into this repository: it is read from the `spin-sdk` crate the
//! components are built with (found through `cargo metadata`), so host and guests always
//! agree on the interface. The output is a `bindgen!` call with absolute paths, included by
//! `src/bindings.rs`.
//!
//! Key-value calls are async on the host side: a write waits for its group commit
//! (`keyvalue/sqlite/writer.rs`) without holding up the thread, so other requests run meanwhile.

use std::path::{Path, PathBuf};
use std::process::Command;

const SPIN_SDK: &str = "spin-sdk";
const KEYVALUE_DIR: &str = "wit/deps/keyvalue-2024-10-17";
const CONFIG_DIR: &str = "wit/deps/wasi-runtime-config-2024-09-27";

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let workspace_manifest = manifest_dir.parent().unwrap().join("Cargo.toml");
    println!("cargo:rerun-if-changed=build.rs");
    println!(
        "cargo:rerun-if-changed={}",
        manifest_dir.parent().unwrap().join("Cargo.lock").display()
    );

    let sdk_dir = find_package_dir(&workspace_manifest, SPIN_SDK);
    let keyvalue = sdk_dir.join(KEYVALUE_DIR);
    let config = sdk_dir.join(CONFIG_DIR);
    for dir in [&keyvalue, &config] {
        assert!(
            dir.is_dir(),
            "{} does not exist: the pinned spin-sdk no longer ships this WIT; update build.rs",
            dir.display()
        );
    }

    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("spin_imports.rs");
    let code = format!(
        r#"wasmtime::component::bindgen!({{
    path: [{keyvalue:?}, {config:?}],
    inline: "
        package edge:host;
        world spin-imports {{
            import wasi:keyvalue/store@0.2.0-draft2;
            import wasi:keyvalue/atomics@0.2.0-draft2;
            import wasi:keyvalue/batch@0.2.0-draft2;
            import wasi:config/store@0.2.0-draft-2024-09-27;
        }}
    ",
    world: "spin-imports",
    imports: {{ "wasi:keyvalue": async | trappable, default: trappable }},
    with: {{
        "wasi:keyvalue/store.bucket": crate::keyvalue::BucketHandle,
        "wasi:keyvalue/atomics.cas": crate::keyvalue::CasHandle,
    }},
}});
"#,
        keyvalue = keyvalue.display().to_string(),
        config = config.display().to_string(),
    );
    std::fs::write(&out, code).unwrap();
}

/// The source directory of `package` as resolved for this workspace.
fn find_package_dir(workspace_manifest: &Path, package: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--manifest-path",
        ])
        .arg(workspace_manifest)
        .output()
        .expect("running `cargo metadata`");
    assert!(
        output.status.success(),
        "`cargo metadata` failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let manifest = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == package)
        .and_then(|p| p["manifest_path"].as_str())
        .unwrap_or_else(|| panic!("`{package}` is not in the workspace's dependency graph"));
    Path::new(manifest).parent().unwrap().to_path_buf()
}
