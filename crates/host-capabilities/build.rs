//! Generates host bindings for the interfaces Spin components import that wasmtime's own
//! crates do not implement at Spin's versions: `wasi:keyvalue@0.2.0-draft2` (store, atomics,
//! batch), `wasi:config/store@0.2.0-draft-2024-09-27` and `fermyon:spin/llm@2.0.0`.
//!
//! Their WIT is not copied into this repository: it is read from the `spin-sdk` crate the
//! components are built with (found through `cargo metadata`), so host and guests always
//! agree on the interface. The output is a `bindgen!` call with absolute paths, included by
//! `src/capabilities/bindings.rs`.
//!
//! `llm.wit` is the one file of its package we need, and the package's other files include
//! worlds that pull in every WASI version Spin knows. So the build writes a one-file package
//! into `OUT_DIR`: the package line of spin-sdk's `world.wit`, then spin-sdk's `llm.wit`.
//!
//! Key-value calls are async on the host side: a write waits for its group commit
//! (`crates/keyvalue-stores/src/sqlite/writer.rs`) without holding up the thread, so other requests run meanwhile.

use std::path::{Path, PathBuf};
use std::process::Command;

const SPIN_SDK: &str = "spin-sdk";
const KEYVALUE_DIR: &str = "wit/deps/keyvalue-2024-10-17";
const CONFIG_DIR: &str = "wit/deps/wasi-runtime-config-2024-09-27";
const SPIN_V2_DIR: &str = "wit/deps/spin@2.0.0";

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    // The workspace's root: the nearest directory above holding the lock file.
    let workspace_dir = manifest_dir
        .ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .expect("the crate is inside the workspace, which has a Cargo.lock");
    let workspace_manifest = workspace_dir.join("Cargo.toml");
    println!("cargo:rerun-if-changed=build.rs");
    println!(
        "cargo:rerun-if-changed={}",
        workspace_dir.join("Cargo.lock").display()
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

    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let llm = llm_package(&sdk_dir.join(SPIN_V2_DIR), &out_dir.join("spin-llm"));

    let out = out_dir.join("spin_imports.rs");
    let code = format!(
        r#"wasmtime::component::bindgen!({{
    path: [{keyvalue:?}, {config:?}, {llm:?}],
    inline: "
        package edge:host;
        world spin-imports {{
            import wasi:keyvalue/store@0.2.0-draft2;
            import wasi:keyvalue/atomics@0.2.0-draft2;
            import wasi:keyvalue/batch@0.2.0-draft2;
            import wasi:config/store@0.2.0-draft-2024-09-27;
            import fermyon:spin/llm@2.0.0;
        }}
    ",
    world: "spin-imports",
    imports: {{
        "wasi:keyvalue": async | trappable,
        "fermyon:spin/llm": async | trappable,
        default: trappable,
    }},
    with: {{
        "wasi:keyvalue/store.bucket": crate::keyvalue::handles::BucketHandle,
        "wasi:keyvalue/atomics.cas": crate::keyvalue::handles::CasHandle,
    }},
}});
"#,
        keyvalue = keyvalue.display().to_string(),
        config = config.display().to_string(),
        llm = llm.display().to_string(),
    );
    std::fs::write(&out, code).unwrap();
}

/// Writes `fermyon:spin@2.0.0` reduced to its `llm` interface into `dir`, and returns `dir`.
fn llm_package(spin_dir: &Path, dir: &Path) -> PathBuf {
    let world = std::fs::read_to_string(spin_dir.join("world.wit")).expect("spin-sdk world.wit");
    let package = world
        .lines()
        .find(|l| l.trim_start().starts_with("package "))
        .expect("spin-sdk's world.wit names its package");
    assert_eq!(
        package.trim(),
        "package fermyon:spin@2.0.0;",
        "the pinned spin-sdk moved the llm interface; update build.rs"
    );
    let llm = std::fs::read_to_string(spin_dir.join("llm.wit")).expect("spin-sdk llm.wit");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("llm.wit"), format!("{package}\n\n{llm}")).unwrap();
    dir.to_path_buf()
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
