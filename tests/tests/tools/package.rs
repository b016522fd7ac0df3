//! The Debian packages `cargo xtask deb` builds (target/debian), installed into this machine
//! with `dpkg -i` as an operator would (docs/deploy.md, "Installing"): the files, owners and
//! modes the package states; the service started by the installed unit's own `ExecStart`, as
//! its `User=`, with its `EnvironmentFile` (systemd is not PID 1 here: the test does what
//! systemd would, as the fleet test does); `/health`, a prediction and the console answered.
//! Then the upgrade path (`dpkg -i` again: a component the operator removed from the models
//! directory stays removed, one still there is replaced by the package's, owners and modes
//! kept, the tokens too); `dpkg --remove` keeps the configuration and data, a reinstallation
//! serves again; and `dpkg --purge` leaves nothing.
//!
//! Root only: it changes this machine's /usr, /etc and /var/lib ([`require_or_skip`]).

use e2e_tests::Client;
use e2e_tests::package::{AI_MODELS, Installed, PROGRAM, built, must, purge, stop_if_systemd};
use e2e_tests::tools::{Tool, require_or_skip};
use fleet::host::Host;
use fleet::unit::{Unit, parse_env};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const UNIT: &str = "/lib/systemd/system/runtime-host.service";
const STATE: &str = "/var/lib/runtime-host";

/// A user's or group's id (`id -u NAME`, `id -g NAME`).
fn id(flag: &str, name: &str) -> u32 {
    must("id", &[flag, name]).trim().parse().expect("an id")
}

/// Asserts `path`'s owner (by name), group and permission bits.
fn assert_owned(path: &str, user: &str, group: &str, mode: u32) {
    let meta = std::fs::metadata(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(meta.uid(), id("-u", user), "{path}'s owner");
    assert_eq!(meta.gid(), id("-g", group), "{path}'s group");
    assert_eq!(meta.permissions().mode() & 0o7777, mode, "{path}'s mode");
}

/// Every path below `roots` whose name holds `runtime-host` (the machine's own toolchains in
/// /usr/local are not the package's, and are not walked).
fn leftovers(roots: &[&str]) -> Vec<String> {
    let mut args: Vec<&str> = roots.to_vec();
    args.extend([
        "-path",
        "/usr/local",
        "-prune",
        "-o",
        "-name",
        "*runtime-host*",
        "-print",
    ]);
    let out = Command::new("find").args(&args).output().expect("find");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The installed unit's `ExecStart`, as systemd runs it: `${VAR}` from its `EnvironmentFile`,
/// as its `User=` (uid, gid, no supplementary groups), that user's HOME, from `/`.
fn start_as_the_unit_says(notify_dir: &Path) -> Host {
    let unit = Unit::from_file(Path::new(UNIT));
    let env = parse_env(&std::fs::read_to_string(&unit.environment_file).unwrap());
    let words = unit.command_line(&env, &[]);
    assert_eq!(words[0], "/usr/bin/runtime-host", "{words:?}");
    let mut command = Command::new(&words[0]);
    command
        .args(&words[1..])
        .env_clear()
        .envs(&env)
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .env("HOME", "/nonexistent")
        .env("USER", &unit.user)
        .current_dir("/")
        .uid(id("-u", &unit.user))
        .gid(id("-g", &unit.user));
    Host::start(command, &notify_dir.join("notify.sock"))
}

/// Starts the service as its unit says, waits for `/health` 200 (every configured model
/// serving), checks that the registry lists `models` and none of `absent`, a
/// prediction and the console, and stops it on the unit's `KillSignal`.
async fn serve(cache: &str, models: &[&str], absent: &[&str]) {
    let notify = tempfile::tempdir().unwrap();
    std::fs::set_permissions(notify.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let started = Instant::now();
    let mut host = tokio::task::block_in_place(|| start_as_the_unit_says(notify.path()));
    println!("READY=1 after {:?} ({cache})", started.elapsed());
    let c = Client::new();
    let app = |path: &str| format!("http://127.0.0.1:{}{path}", fleet::APP_PORT);
    // 200 only once every configured model serves.
    e2e_tests::until("/health 200", Duration::from_secs(300), || async {
        c.get(&app("/health")).await.status == 200
    })
    .await;
    println!("/health 200 after {:?}", started.elapsed());
    let health = c.get(&app("/health")).await;
    assert_eq!(health.value()["status"], "ok", "{}", health.text());
    let listing = c.get(&app("/registry")).await.value();
    let names: Vec<&str> = listing["registrations"]
        .as_array()
        .unwrap_or_else(|| panic!("the registry's listing: {listing}"))
        .iter()
        .filter_map(|r| r["app_name"].as_str()?.strip_prefix("runtime-host/"))
        .collect();
    for model in models {
        assert!(names.contains(model), "{model} is registered: {listing}");
    }
    for model in absent {
        assert!(
            !names.contains(model),
            "{model} is not registered: {listing}"
        );
    }
    let examples = c.get(&app("/models/iris/test_examples")).await.value();
    let body = e2e_tests::request_for(
        &examples["examples"][0],
        &examples["usage_instructions"]["body_format"],
    );
    let predicted = c.post_json(&app("/models/iris/predict"), &body, None).await;
    assert_eq!(predicted.status, 200, "{}", predicted.text());
    assert_eq!(predicted.value()["success"], true, "{}", predicted.text());
    let console = c.get(&app("/")).await;
    assert_eq!(console.status, 200);
    assert!(
        console.text().contains("<html"),
        "the console: {}",
        console.text()
    );
    let stopped =
        tokio::task::block_in_place(|| host.signal_and_wait("INT", Duration::from_secs(90)));
    assert!(
        stopped.success(),
        "stopped by the unit's KillSignal: {stopped}"
    );
}

/// The seeded models directory's entries, sorted.
fn seeded() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(format!("{STATE}/models"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_package_installs_serves_through_its_unit_and_purges_cleanly() {
    let test = "tools::package";
    let Some(debs) = require_or_skip(Tool::Package, test, built()) else {
        return;
    };
    let started = Instant::now();
    let _installed = Installed::install(&debs);
    println!("dpkg -i: {:?}", started.elapsed());

    // The files, owners and modes the package states.
    assert_owned("/usr/bin/runtime-host", "root", "root", 0o755);
    for name in e2e_tests::package::COMPONENTS {
        assert_owned(
            &format!("/usr/lib/runtime-host/{name}.wasm"),
            "root",
            "root",
            0o644,
        );
    }
    // Folders 0755 and files 0644, whatever the umask the packages were built under.
    for dir in [
        "/usr/lib/runtime-host",
        "/usr/lib/runtime-host/models",
        "/usr/lib/runtime-host/models/iris",
        "/usr/share/runtime-host",
        "/usr/share/runtime-host/ai-models",
        "/usr/share/runtime-host/ai-models/all-minilm-l6-v2",
        "/usr/share/runtime-host/ai-models/smollm2-135m-instruct",
        "/etc/runtime-host",
    ] {
        assert_owned(dir, "root", "root", 0o755);
    }
    assert_owned(
        "/usr/lib/runtime-host/models/iris/model.toml",
        "root",
        "root",
        0o644,
    );
    assert_owned(
        "/usr/share/runtime-host/ai-models/all-minilm-l6-v2/tokenizer.json",
        "root",
        "root",
        0o644,
    );
    assert_owned(UNIT, "root", "root", 0o644);
    assert!(id("-u", "runtime-host") < 1000, "a system user");
    for dir in ["", "/data", "/cache", "/models"] {
        assert_owned(
            &format!("{STATE}{dir}"),
            "runtime-host",
            "runtime-host",
            0o700,
        );
    }
    for model in [
        "molprop.wasm",
        "minilm.wasm",
        "textgen.wasm",
        "iris/model.toml",
    ] {
        let seeded = format!("{STATE}/models/{model}");
        assert_owned(&seeded, "runtime-host", "runtime-host", 0o600);
    }
    assert_owned("/etc/runtime-host/host.env", "root", "root", 0o600);
    assert_owned(
        "/etc/runtime-host/runtime-config.toml",
        "runtime-host",
        "runtime-host",
        0o600,
    );
    let host_env = std::fs::read_to_string("/etc/runtime-host/host.env").unwrap();
    let env = parse_env(&host_env);
    assert_eq!(env["HOST_ADDRESS"], "127.0.0.1");
    for token in ["CHAT_ADMIN_TOKEN", "UP_ADMIN_TOKEN"] {
        let value = &env[token];
        assert!(
            value.len() == 64 && value.bytes().all(|b| b.is_ascii_hexdigit()),
            "{token} is made at install, 32 random bytes in hex: {value:?}"
        );
    }
    assert_ne!(env["CHAT_ADMIN_TOKEN"], env["UP_ADMIN_TOKEN"]);

    // Served by the unit's own command line, from a cold compilation cache.
    let all = ["molprop", "minilm", "textgen", "iris"];
    serve("a cold compilation cache", &all, &[]).await;

    // Upgraded (the same package again runs postinst's upgrade branch): the operator removed
    // minilm from the models directory and it stays removed; molprop, changed there, is the
    // package's build again; owners, modes and tokens are kept.
    let models = format!("{STATE}/models");
    std::fs::remove_file(format!("{models}/minilm.wasm")).unwrap();
    std::fs::write(format!("{models}/molprop.wasm"), "not the package's").unwrap();
    let before = seeded();
    let program = debs
        .iter()
        .find(|d| !d.to_string_lossy().contains(AI_MODELS))
        .expect("the program's package");
    let started = Instant::now();
    must("dpkg", &["-i", program.to_str().unwrap()]);
    println!("dpkg -i again (an upgrade): {:?}", started.elapsed());
    stop_if_systemd();
    assert_eq!(
        seeded(),
        before,
        "the upgrade left the models directory's entries"
    );
    assert_eq!(
        std::fs::read(format!("{models}/molprop.wasm")).unwrap(),
        std::fs::read("/usr/lib/runtime-host/molprop.wasm").unwrap(),
        "the package's component still in the models directory is the new build's"
    );
    for dir in ["", "/data", "/cache", "/models"] {
        let dir = format!("{STATE}{dir}");
        assert_owned(&dir, "runtime-host", "runtime-host", 0o700);
    }
    for model in ["molprop.wasm", "textgen.wasm", "iris/model.toml"] {
        let kept = format!("{models}/{model}");
        assert_owned(&kept, "runtime-host", "runtime-host", 0o600);
    }
    assert_eq!(
        std::fs::read_to_string("/etc/runtime-host/host.env").unwrap(),
        host_env,
        "host.env (its tokens) is never made again"
    );

    // Removed: the configuration and data stay, as Debian does.
    let marker = format!("{STATE}/data/kept-by-remove");
    std::fs::write(&marker, "data").unwrap();
    std::os::unix::fs::chown(&marker, Some(id("-u", PROGRAM)), Some(id("-g", PROGRAM))).unwrap();
    must("dpkg", &["--remove", PROGRAM, AI_MODELS]);
    assert!(!Path::new("/usr/bin/runtime-host").exists());
    assert!(Path::new("/etc/runtime-host/host.env").is_file());
    assert!(Path::new(&marker).is_file(), "remove keeps the data");

    // Reinstalled: the same configuration, data and models, served again.
    let started = Instant::now();
    let mut args = vec!["-i"];
    args.extend(debs.iter().map(|p| p.to_str().unwrap()));
    must("dpkg", &args);
    println!("dpkg -i after remove: {:?}", started.elapsed());
    stop_if_systemd();
    assert!(Path::new(&marker).is_file(), "the data is the kept one");
    assert_eq!(seeded(), before, "the models directory is the kept one");
    assert_eq!(
        std::fs::read_to_string("/etc/runtime-host/host.env").unwrap(),
        host_env
    );
    let kept = ["molprop", "textgen", "iris"];
    serve(
        "reinstalled, its compilation cache kept",
        &kept,
        &["minilm"],
    )
    .await;

    // Purged: nothing left.
    purge();
    let left = leftovers(&["/usr", "/lib/systemd", "/etc", "/var/lib"]);
    assert!(left.is_empty(), "purge left {left:?}");
    let owned = must(
        "find",
        &["/etc", "/var/lib", "/usr", "-xdev", "-user", "runtime-host"],
    );
    assert!(owned.is_empty(), "files of the kept user left: {owned}");
}
