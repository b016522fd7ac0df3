//! `spin build` builds exactly what `cargo xtask build` builds (issue 62, item 3): each
//! component's build command in spin.toml is `cargo xtask build-components`, the same
//! components with the same features and profile settings. Before, `spin build` after
//! `cargo xtask up` recompiled 211 crates in 4 min 55 s with a feature set of each
//! component's own, overwriting xtask's `.wasm` files. Here, after the build the test
//! command ran, it compiles nothing and leaves every `.wasm` as it was.

use e2e_tests::spin::spin_or_skip;
use e2e_tests::{component, workspace_root};
use std::process::Command;
use std::time::SystemTime;

#[test]
fn spin_build_after_xtask_build_compiles_nothing() {
    let Some(spin) = spin_or_skip("spin build after cargo xtask build") else {
        return;
    };
    let built = component("molprop");
    let dir = built.parent().unwrap();
    let modified = || -> Vec<(String, SystemTime)> {
        let mut all: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "wasm"))
            .map(|e| {
                let when = e.metadata().unwrap().modified().unwrap();
                (e.file_name().to_string_lossy().into_owned(), when)
            })
            .collect();
        all.sort();
        all
    };
    let before = modified();
    let mut command = Command::new(&spin);
    command.arg("build").current_dir(workspace_root());
    // As from a user's shell: none of the variables `cargo test` set for this binary.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        if name.starts_with("CARGO_") && name != "CARGO_HOME" && name != "CARGO_TARGET_DIR" {
            command.env_remove(name);
        }
    }
    let out = command.output().expect("running spin build");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let builds = text.matches("with `cargo xtask build-components`").count();
    assert!(builds >= 7, "every component built by xtask:\n{text}");
    // xtask itself may be compiled first where its own sources changed since.
    let compiled: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("Compiling ") && !l.contains(" xtask v"))
        .collect();
    assert!(compiled.is_empty(), "spin build compiled again:\n{text}");
    assert_eq!(modified(), before, "spin build rewrote a component");
}
