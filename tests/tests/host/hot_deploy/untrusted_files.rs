//! A model directory is untrusted input (issue 45, section 2): whoever can drop files into
//! `--models` must not freeze the host, read files through it, fill its disk or forge its
//! log. Each attack of the issue is dropped into a watched directory while a client polls a
//! healthy model's `/health`, which must keep answering quickly throughout.

use super::{listing, until};
use e2e_tests::{Client, Stack, temp_dir};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// An iris model directory at `models/<name>`, built aside under a hidden name (the watcher
/// passes over those) and moved in at once, so no scan sees it half-written.
fn iris_at(models: &Path, name: &str, extra: impl FnOnce(&Path)) -> PathBuf {
    static STAGED: AtomicUsize = AtomicUsize::new(0);
    let staging = models.join(format!(
        ".staging-{}",
        STAGED.fetch_add(1, Ordering::Relaxed)
    ));
    e2e_tests::copy_model(&e2e_tests::model_dir("iris"), &staging);
    extra(&staging);
    let dir = models.join(name);
    std::fs::rename(&staging, &dir).unwrap();
    dir
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// Polls `url` every 50 ms until stopped; the slowest answer, and any that failed.
fn poll_health(
    url: String,
    stop: Arc<AtomicBool>,
) -> tokio::task::JoinHandle<(Duration, Vec<u16>)> {
    tokio::spawn(async move {
        let c = Client::new();
        let (mut slowest, mut failed) = (Duration::ZERO, Vec::new());
        while !stop.load(Ordering::Relaxed) {
            let started = Instant::now();
            let r = c.get(&url).await;
            slowest = slowest.max(started.elapsed());
            if r.status != 200 {
                failed.push(r.status);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        (slowest, failed)
    })
}

/// Every file under `dir`, with its contents' size.
fn files_under(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let meta = std::fs::symlink_metadata(e.path()).unwrap();
        if meta.is_dir() {
            out.extend(files_under(&e.path()));
        } else {
            out.push((e.path(), meta.len()));
        }
    }
    out
}

/// `up` watching a models directory (in a temporary directory) that holds iris, with a
/// 3 s deadline (so a removed version's drain is short), on `ports` ports.
fn watched_iris(ports: u16) -> (tempfile::TempDir, PathBuf, Stack) {
    let parent = temp_dir();
    let models = parent.path().join("models");
    std::fs::create_dir(&models).unwrap();
    iris_at(&models, "iris", |_| {});
    let dir = models.to_str().unwrap();
    let args = [
        "--models",
        dir,
        "--watch-interval",
        "300ms",
        "--deadline",
        "3s",
    ];
    let stack = Stack::up(&args, ports);
    (parent, models, stack)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_model_directory_neither_freezes_leaks_fills_nor_forges() {
    let (parent, models, stack) = watched_iris(6);
    let secret = parent.path().join("shadow");
    std::fs::write(&secret, "root:$6$SECRETHASH:19000:0:99999:7:::\n").unwrap();
    // A file outside the models directory that a link points at.
    let linked = parent.path().join("private-key");
    std::fs::write(&linked, "LINKED-PRIVATE-KEY\n").unwrap();
    let c = Client::new();
    let port = stack.model_port("iris").await;
    let stop = Arc::new(AtomicBool::new(false));
    let health = poll_health(format!("http://127.0.0.1:{port}/health"), stop.clone());

    // A FIFO beside the files: left out, never opened; the model deploys without it.
    iris_at(&models, "piped", |d| mkfifo(&d.join("test_set.tsv.pipe")));
    // A link leading out of the directory: refused by name, never copied.
    iris_at(&models, "leaky", |d| {
        std::os::unix::fs::symlink(&linked, d.join("test_set.tsv.extra")).unwrap()
    });
    // A sparse 2 GB model file (a few KB on disk): refused from its size, never read.
    iris_at(&models, "giant", |d| {
        let f = std::fs::File::create(d.join("model.onnx")).unwrap();
        f.set_len(2 << 30).unwrap();
    });
    // A manifest that is somebody's secret: refused without quoting it.
    iris_at(&models, "quoted", |d| {
        std::fs::copy(&secret, d.join("model.toml")).unwrap();
    });
    // Components that are links (issue 56): to a secret, and to a file of /proc without end.
    // Refused by name before anything is read.
    std::os::unix::fs::symlink(&secret, models.join("shadow.wasm")).unwrap();
    std::os::unix::fs::symlink("/proc/self/pagemap", models.join("pm.wasm")).unwrap();
    // Names the admin API refuses, and a newline that would forge a log line.
    for name in [
        "bad name<x>",
        "ünï",
        "forged\nFORGED a line of the host's own",
    ] {
        iris_at(&models, name, |_| {});
    }

    until("the FIFO's model serving", || {
        let (c, url) = (c.clone(), stack.app("/models/piped/health"));
        async move { c.get(&url).await.status == 200 }
    })
    .await;
    until("the linked components refused", || {
        let log = stack.log();
        async move { log.contains("\"pm.wasm\" is a symbolic link") }
    })
    .await;
    until(
        "the link, the giant and the quoted manifest refused",
        || {
            let log = stack.log();
            async move {
                ["model=leaky", "model=giant", "model=quoted"]
                    .iter()
                    .all(|m| log.lines().any(|l| l.contains(m) && l.contains("refused")))
            }
        },
    )
    .await;
    let log = stack.log();
    let refusal = |model: &str| {
        log.lines()
            .find(|l| l.contains(&format!("model={model}")) && l.contains("refused"))
            .unwrap()
            .to_owned()
    };
    assert!(refusal("leaky").contains("test_set.tsv.extra"), "{log}");
    for link in ["shadow.wasm", "pm.wasm"] {
        assert!(
            log.lines()
                .any(|l| l.contains(&format!("{link:?} is a symbolic link"))),
            "{link} not refused as a link:\n{log}"
        );
    }
    assert!(
        !log.contains("root:$6"),
        "a linked file's bytes in the log:\n{log}"
    );
    assert!(refusal("giant").contains("over the limit"), "{log}");
    assert!(
        !log.contains("SECRETHASH"),
        "a file's contents in the log:\n{log}"
    );
    assert!(
        !log.lines().any(|l| l.starts_with("FORGED")),
        "a forged log line:\n{log}"
    );
    for name in ["bad name<x>", "ünï"] {
        assert!(
            log.contains(&format!("{name:?} is not a deployment name")),
            "{log}"
        );
    }

    // Only the models with valid names and files are registered.
    let mut names: Vec<String> = listing(&stack)
        .await
        .registrations
        .into_iter()
        .map(|r| r.app_name)
        .filter(|n| n.starts_with("runtime-host/"))
        .collect();
    names.sort();
    assert_eq!(names, ["runtime-host/iris", "runtime-host/piped"]);

    // Nothing of the linked file or the giant reached the data directory.
    let data = files_under(stack.data_dir());
    for (path, len) in &data {
        assert!(*len < 64 << 20, "{} holds {len} bytes", path.display());
        if path.starts_with(stack.data_dir().join("snapshots")) {
            let bytes = std::fs::read(path).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            assert!(
                !text.contains("LINKED-PRIVATE-KEY"),
                "{} copied the linked file",
                path.display()
            );
        }
    }

    stop.store(true, Ordering::Relaxed);
    let (slowest, failed) = health.await.unwrap();
    assert!(failed.is_empty(), "/health failed: {failed:?}");
    assert!(
        slowest < Duration::from_secs(2),
        "/health took {slowest:?} while the directory was read"
    );
}

/// How many version snapshots `model` has in the data directory.
fn snapshots_of(stack: &Stack, model: &str) -> Vec<PathBuf> {
    let dir = stack.data_dir().join("snapshots").join(model);
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn snapshots_are_pruned_as_versions_and_models_come_and_go() {
    let (_parent, models, stack) = watched_iris(4);
    let iris = models.join("iris");
    let c = Client::new();
    let info = stack.app("/models/iris/info");
    let manifest = std::fs::read_to_string(iris.join("model.toml")).unwrap();

    // Three versions after the first, one of them refused: the serving one and the one before
    // stay; the first and the refused one go.
    for (i, version) in ["v2", "broken", "v3"].iter().enumerate() {
        if *version == "broken" {
            std::fs::write(iris.join("model.toml"), "not toml at all").unwrap();
            until("the broken version refused", || {
                let log = stack.log();
                async move { log.matches("new version refused").count() == 1 }
            })
            .await;
            continue;
        }
        let named = manifest.replacen(
            "[info]\n",
            &format!("[info]\nmodel_version = \"{version}\"\n"),
            1,
        );
        std::fs::write(iris.join("model.toml"), named).unwrap();
        until(&format!("version {version} (step {i}) serving"), || {
            let (c, info) = (c.clone(), info.clone());
            async move { c.get(&info).await.value()["model_version"] == *version }
        })
        .await;
    }
    until("old snapshots pruned", || {
        let n = snapshots_of(&stack, "iris").len();
        async move { n == 2 }
    })
    .await;
    let kept = snapshots_of(&stack, "iris");
    assert!(
        kept.iter()
            .all(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.')),
        "{kept:?}"
    );

    // Removed: its snapshots go once its requests could have finished.
    std::fs::remove_dir_all(&iris).unwrap();
    until("the removed model's snapshots gone", || {
        let n = snapshots_of(&stack, "iris").len();
        async move { n == 0 }
    })
    .await;
    // The model still serves nothing of it.
    let r = c.get(&stack.app("/models/iris/health")).await;
    assert_ne!(r.status, 200);
}
