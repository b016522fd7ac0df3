//! The compile cache as an attacker meets it (issue 56): code from it is run as the host's
//! user, so a cache somebody else could write is refused before anything runs; every
//! command makes it private whatever the umask; damaged code in it is compiled again, not
//! run; and a `prepare` child stops when told to, even mid-compile.

use e2e_tests::{Client, HostBuilder, component, host_binary, host_refuses, temp_dir};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Every file and directory under `dir`, itself included.
fn everything_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_owned()];
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        match entry.file_type().unwrap().is_dir() {
            true => out.extend(everything_under(&path)),
            false => out.push(path),
        }
    }
    out
}

/// The planted-cache attack: another user's world-writable directory, an "artifact" planted
/// in it. Neither `serve` nor `compile` uses it, and both say why and what to do.
#[test]
fn a_cache_another_user_could_write_is_refused_before_anything_runs() {
    let base = temp_dir();
    let cache = base.path().join("cache");
    let layout = cache.join("compiled-mapped-1");
    std::fs::create_dir_all(&layout).unwrap();
    let planted = layout.join("planted.cwasm");
    std::fs::write(&planted, b"\x7fELF shellcode").unwrap();
    chmod(&cache, 0o777);
    if is_root() {
        std::os::unix::fs::chown(&cache, Some(65534), Some(65534)).unwrap();
    } else {
        eprintln!("not root: the cache is this user's own, writable by all (no chown)");
    }
    let data = temp_dir();
    let chat = component("chat").display().to_string();
    let (cache_arg, data_arg) = (cache.to_str().unwrap(), data.path().to_str().unwrap());
    let serve = host_refuses(
        &[
            "serve",
            &chat,
            "--listen",
            "127.0.0.1:0",
            "--cache-dir",
            cache_arg,
            "--data-dir",
            data_arg,
        ],
        Duration::from_secs(30),
    );
    assert!(serve.contains("refusing the compile cache"), "{serve}");
    let why = if is_root() {
        "belongs to another user"
    } else {
        "can be written by other users"
    };
    assert!(serve.contains(why), "{serve}");
    assert!(serve.contains("--cache-dir"), "says what to do: {serve}");
    let compile = host_refuses(
        &[
            "compile",
            &chat,
            "--cache-dir",
            cache_arg,
            "--data-dir",
            data_arg,
        ],
        Duration::from_secs(30),
    );
    assert!(compile.contains("refusing the compile cache"), "{compile}");
    // Nothing was written into it.
    let names: Vec<_> = everything_under(&cache);
    assert_eq!(names, [cache.clone(), layout, planted], "{names:?}");
}

/// `compile` and `snapshot` under umask 000 make the cache 0700 and every file in it 0600
/// (the data directory's rule: snapshots carry the model files it keeps private), and the
/// snapshot written out 0600 too.
#[test]
fn the_cache_is_private_whatever_the_umask() {
    let base = temp_dir();
    let cache = base.path().join("new-cache");
    let data = temp_dir();
    let output = base.path().join("iris-snapshot.wasm");
    let host = host_binary().display().to_string();
    let (cache_arg, data_arg) = (cache.display(), data.path().display());
    for command in [
        format!(
            "compile '{}' --cache-dir '{cache_arg}' --data-dir '{data_arg}'",
            component("echo-model").display()
        ),
        format!(
            "snapshot '{}' --dir '{}:/model' -o '{}' --cache-dir '{cache_arg}' --data-dir \
             '{data_arg}'",
            component("onnx-model").display(),
            e2e_tests::model_dir("iris").display(),
            output.display()
        ),
    ] {
        let script = format!("umask 000; exec '{host}' {command}");
        let out = Command::new("sh").args(["-c", &script]).output().unwrap();
        assert!(
            out.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let written = std::fs::metadata(&output).unwrap().mode() & 0o777;
    assert_eq!(written, 0o600, "the snapshot written out");
    assert!(cache.join("snapshots").is_dir(), "the snapshot was cached");
    let everything = everything_under(&cache);
    assert!(
        everything
            .iter()
            .any(|p| p.extension().is_some_and(|x| x == "cwasm")),
        "{everything:?}"
    );
    for path in everything {
        let meta = std::fs::metadata(&path).unwrap();
        let mode = meta.mode() & 0o777;
        let wanted = if meta.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode, wanted, "{} is {mode:o}", path.display());
    }
}

/// Noise over every page of the cached code: the next start finds it does not match its
/// digest, compiles again and serves, where it crashed on the first request before.
#[tokio::test(flavor = "multi_thread")]
async fn damaged_cached_code_is_compiled_again_not_run() {
    let cache = temp_dir();
    let cache_arg = cache.path().display().to_string();
    let start = || {
        let data = temp_dir();
        let host = HostBuilder::new(component("echo-model"), data.path())
            .arg("--optimized-only")
            .arg("--cache-dir")
            .arg(&cache_arg)
            .start();
        (data, host)
    };
    let c = Client::new();
    let (_data, host) = start();
    assert_eq!(c.get(&host.url("/health")).await.status, 200);
    host.stop();
    let layout = cache.path().join("compiled-mapped-1");
    let mut damaged = 0;
    for entry in std::fs::read_dir(&layout).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "cwasm") {
            continue;
        }
        let mut bytes = std::fs::read(&path).unwrap();
        for page in bytes.chunks_mut(4096) {
            let n = page.len().min(64);
            page[..n]
                .iter_mut()
                .for_each(|b| *b = b.wrapping_mul(31) ^ 0xa5);
        }
        std::fs::write(&path, bytes).unwrap();
        damaged += 1;
    }
    assert!(damaged > 0, "the first start cached its code");
    let (_data, host) = start();
    for _ in 0..5 {
        assert_eq!(c.get(&host.url("/health")).await.status, 200);
    }
    let said = host.output();
    assert!(
        said.contains("does not match the digest written with it"),
        "{said}"
    );
}

/// A `prepare` child killed in the middle of a long compile (the ONNX component, from an
/// empty cache) by SIGTERM exits at once, where it ran on until its compile ended (and
/// waited for good on a lock it held itself).
#[test]
fn a_prepare_child_stops_on_sigterm_mid_compile() {
    let cache = temp_dir();
    let data = temp_dir();
    let mut child = Command::new(host_binary())
        .arg("prepare")
        .arg(component("onnx-model"))
        .arg("--cache-dir")
        .arg(cache.path())
        .arg("--data-dir")
        .arg(data.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "still compiling after 1.5 s"
    );
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = e2e_tests::wait_for_exit(&mut child, Duration::from_secs(3));
    let _ = child.kill();
    let _ = child.wait();
    assert!(status.is_some(), "prepare ran on after SIGTERM");
}

/// A parent that exits (a model failing its self-test ends `runtime-host model` at once)
/// takes its `prepare` child with it: left running, the child went on making a snapshot of
/// files the caller then removed, and cached it under the key of the files as they had been.
#[test]
fn a_prepare_child_ends_with_its_parent() {
    let cache = temp_dir();
    let data = temp_dir();
    let model = temp_dir();
    // A model the host's checks pass and its own initialization refuses: it fails its
    // self-test on baseline code while the child still makes its snapshot.
    e2e_tests::copy_model(&e2e_tests::model_dir("solubility"), model.path());
    let fingerprints = model.path().join("training_fingerprints.bin");
    let bytes = std::fs::read(&fingerprints).unwrap();
    std::fs::write(&fingerprints, &bytes[..bytes.len() - 3]).unwrap();
    let out = Command::new(host_binary())
        .arg("model")
        .arg(component("onnx-model"))
        .args(["--registry", "http://127.0.0.1:9"])
        .arg("--dir")
        .arg(format!("{}:/model", model.path().display()))
        .arg("--cache-dir")
        .arg(cache.path())
        .arg("--data-dir")
        .arg(data.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the broken model started: {said}");
    let cache_arg = cache.path().display().to_string();
    let mut left = Vec::new();
    for _ in 0..20 {
        left = e2e_tests::processes_with(&["prepare", &cache_arg]);
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        left.is_empty(),
        "the child outlived its parent: {left:?}\n{said}"
    );
}
