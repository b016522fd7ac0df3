//! Files the project creates are private from the start (issue 62, item 3): the first `up`
//! after `cargo xtask install-models` warned twice that `.data` was readable by others, as
//! `models/install_ai_model.py` had made it 0755. The script now makes what it creates 0700
//! (whatever the umask), and `up` tightens a data directory an older script left open.

use e2e_tests::{Stack, component, temp_dir};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const WARNING: &str = "can be read by other users";

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// `up` on `data`, with one small model, until it is ready; its log.
fn up_log(data: &Path) -> String {
    let models = temp_dir();
    let echo = component("echo-model");
    std::fs::copy(echo, models.path().join("echo.wasm")).unwrap();
    let dir = models.path().to_str().unwrap();
    let mut stack = Stack::up_at(data, &["--models", dir, "--watch-interval", "0s"], 4);
    let log = stack.log();
    assert!(stack.stop(Duration::from_secs(60)).success());
    log
}

#[test]
fn the_first_up_after_install_models_finds_its_data_directory_private() {
    let root = temp_dir();
    // What install-models does before it downloads anything: DEST and its parents made,
    // here under the umask most systems give, 022.
    let data = root.path().join(".data");
    let dest = data.join("ai-models/all-minilm-l6-v2");
    let script = e2e_tests::workspace_root().join("models");
    let made = Command::new("sh")
        .arg("-c")
        .arg("umask 022 && python3 -c \"import pathlib, sys; sys.path.insert(0, sys.argv[1]); \
              import install_ai_model as m; m.private_dest(pathlib.Path(sys.argv[2]))\" \"$0\" \"$1\"")
        .arg(&script)
        .arg(&dest)
        // Nothing written into the checkout's models/.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .status()
        .expect("python3");
    assert!(made.success());
    for dir in [&data, &data.join("ai-models"), &dest] {
        assert_eq!(mode(dir), 0o700, "{}", dir.display());
    }
    let log = up_log(&data);
    assert!(!log.contains(WARNING), "{log}");

    // A data directory an older install-models left 0755, holding only the AI models'
    // files: `up` makes it private itself, without a warning.
    let old = root.path().join("old/.data");
    std::fs::create_dir_all(old.join("ai-models")).unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o755)).unwrap();
    let log = up_log(&old);
    assert!(!log.contains(WARNING), "{log}");
    assert_eq!(mode(&old), 0o700);
}
