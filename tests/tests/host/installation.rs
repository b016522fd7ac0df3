//! Where `runtime-host` takes its own components and default models from (issue 56, item 2):
//! its installation, never the working directory. Run from a directory another user can
//! write, an installed `up` once loaded that user's `target/wasm32-wasip2/release/chat.wasm`
//! (and `./models`), which read back the real chat admin token.
//!
//! The binary is installed as docs/operating.md says (`<prefix>/bin/runtime-host`, its
//! components in `<prefix>/lib/runtime-host/`) and started in a directory holding planted
//! components and models.

use e2e_tests::{Client, component, host_binary, temp_dir};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// A hard link where it can be (the same file system), else a copy.
fn install_file(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).unwrap();
    }
}

/// `<prefix>/bin/runtime-host`, and the stack's components in `<prefix>/lib/runtime-host`
/// when `with_components`.
pub(super) fn install(prefix: &Path, with_components: bool) -> std::path::PathBuf {
    let binary = prefix.join("bin/runtime-host");
    install_file(&host_binary(), &binary);
    if with_components {
        for name in e2e_tests::package::COMPONENTS {
            let file = format!("{}.wasm", name.replace('-', "_"));
            install_file(
                &component(name),
                &prefix.join("lib/runtime-host").join(file),
            );
        }
        std::fs::create_dir_all(prefix.join("lib/runtime-host/models")).unwrap();
    }
    binary
}

/// A working directory another user could have filled: `target/wasm32-wasip2/release` with
/// each of the stack's components replaced by echo-model, and `models/planted.wasm`.
fn planted_working_dir(dir: &Path) {
    let echo = component("echo-model");
    for name in e2e_tests::package::COMPONENTS {
        let file = format!("{}.wasm", name.replace('-', "_"));
        install_file(&echo, &dir.join("target/wasm32-wasip2/release").join(file));
    }
    install_file(&echo, &dir.join("models/planted.wasm"));
}

/// Without components beside it, an installed binary refuses to start, saying where it
/// looked, though the working directory holds a `registry.wasm` of the expected name.
#[test]
fn an_installed_binary_without_components_never_takes_the_working_directorys() {
    let root = temp_dir();
    let binary = install(&root.path().join("prefix"), false);
    let work = root.path().join("work");
    planted_working_dir(&work);
    let data = root.path().join("data");
    let out = Command::new(&binary)
        .args(["up", "--app-port", "0", "--data-dir"])
        .arg(&data)
        .env("RUNTIME_HOST_CACHE_DIR", e2e_tests::shared_cache_dir())
        .current_dir(&work)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "up started: {err}");
    assert!(
        err.contains("registry.wasm") && err.contains("never searched"),
        "{err}"
    );
    assert!(
        err.contains(
            &root
                .path()
                .join("prefix/lib/runtime-host")
                .display()
                .to_string()
        ),
        "the message names the installation's directory: {err}"
    );
}

/// Installed with its components, `up` started in the planted directory serves the real
/// chat (its sample dialogs, its admin token) and deploys none of the planted models.
#[tokio::test(flavor = "multi_thread")]
async fn an_installed_up_serves_its_own_components_whatever_the_working_directory_holds() {
    let root = temp_dir();
    let binary = install(&root.path().join("prefix"), true);
    let work = root.path().join("work");
    planted_working_dir(&work);
    let data = root.path().join("data");
    let up = InstalledUp::start(
        &binary,
        &data,
        &work,
        ("CHAT_ADMIN_TOKEN", "installation-test-token"),
    );
    let app_port = up.app_port;
    let c = Client::new();
    let app = |path: &str| format!("http://127.0.0.1:{app_port}{path}");

    // The real chat, with its sample dialogs.
    let chats = c.get(&app("/api/chats")).await;
    assert_eq!(chats.status, 200, "{}", chats.text());
    assert!(
        chats.value().as_array().is_some_and(|a| !a.is_empty()),
        "chat's sample dialogs: {}",
        chats.text()
    );
    let registry = c.get(&app("/registry")).await;
    assert_eq!(registry.status, 200, "{}", registry.text());
    let names: Vec<String> = registry.value()["registrations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["app_name"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        names.contains(&"runtime-host/molprop".to_owned()),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.contains("planted")),
        "a planted model was deployed: {names:?}"
    );
    let planted = c.get(&app("/models/planted/health")).await;
    assert_eq!(planted.status, 404, "{}", planted.text());
    let molprop = c.get(&app("/models/molprop/health")).await;
    assert_eq!(molprop.status, 200, "{}", molprop.text());

    up.stop();
}

/// `up` of an installed binary on free ports, with `data` as its data directory and `cwd`
/// as its working directory, the tests' shared compile cache and one token from the
/// environment; serving once it printed `stack ready`.
pub(super) struct InstalledUp {
    child: std::process::Child,
    pub(super) app_port: u16,
}

impl InstalledUp {
    pub(super) fn start(binary: &Path, data: &Path, cwd: &Path, token: (&str, &str)) -> Self {
        let app_port = e2e_tests::free_port();
        let first = e2e_tests::port_block(8);
        let mut child = Command::new(binary)
            .arg("up")
            .args(["--ports", &format!("{first}-{}", first + 7)])
            .args(["--registry-port", &e2e_tests::free_port().to_string()])
            .args(["--chat-port", &e2e_tests::free_port().to_string()])
            .args(["--app-port", &app_port.to_string()])
            .arg("--data-dir")
            .arg(data)
            .arg("--ai-models-dir")
            .arg(e2e_tests::ai_models_dir())
            .env("RUNTIME_HOST_CACHE_DIR", e2e_tests::shared_cache_dir())
            .env(token.0, token.1)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        e2e_tests::wait_for_stack_ready(&mut child, Duration::from_secs(180));
        Self { child, app_port }
    }

    /// Ctrl-C, and `up` stops within a minute.
    pub(super) fn stop(mut self) {
        e2e_tests::interrupt(&self.child);
        let status = e2e_tests::wait_for_exit(&mut self.child, Duration::from_secs(60));
        let _ = self.child.kill();
        assert!(status.is_some(), "up did not stop");
    }
}
