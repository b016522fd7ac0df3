//! The fleet's files as shipped (deploy/fleet, docs/deploy.md) stop the mistakes they used to
//! invite (issue 56, item 11): `runtime-host up` started as the unit says refuses the
//! placeholder tokens and Redis password, an empty token file, and a runtime config others
//! can read; `GET /health` on the app port is ready only while every configured model
//! serves. (HAProxy's public routes and the unit's cache directory are checked by
//! `crates/fleet`'s own tests.)

use e2e_tests::{Client, Stack, component, host_binary, temp_dir};
use fleet::unit::{Layout, Unit, deploy_file_with, parse_env};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs the unit's `ExecStart` with its paths moved under `root` (`etc/`, `state/`) and the
/// environment `env`, the runtime config written from `config` with `mode`; its standard
/// error once it exited (it must exit, refusing, within a minute).
fn unit_refuses(root: &Path, env: &[(String, String)], config: &str, mode: u32) -> String {
    let (etc, state) = (root.join("etc"), root.join("state"));
    std::fs::create_dir_all(&etc).unwrap();
    let config_file = etc.join("runtime-config.toml");
    std::fs::write(&config_file, config).unwrap();
    std::fs::set_permissions(&config_file, std::fs::Permissions::from_mode(mode)).unwrap();
    let env: std::collections::BTreeMap<String, String> = env.iter().cloned().collect();
    let cache = e2e_tests::shared_cache_dir();
    let ai_models = e2e_tests::ai_models_dir();
    let binary = host_binary();
    let models = root.join("models");
    std::fs::create_dir_all(&models).unwrap();
    let layout = Layout {
        binary: &binary,
        etc: &etc,
        state: &state,
        models: &models,
        ai_models: &ai_models,
        cache: &cache,
    };
    let words = Unit::load().command_line(&env, &layout.pairs());
    let mut child = Command::new(&words[0])
        .args(&words[1..])
        .env_remove("CHAT_ADMIN_TOKEN")
        .env_remove("UP_ADMIN_TOKEN")
        .envs(&env)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = e2e_tests::wait_for_exit(&mut child, Duration::from_secs(60));
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        status.is_some_and(|s| !s.success()),
        "the unit's command did not refuse ({status:?}): {err}"
    );
    err
}

/// host.env as shipped, with `(name, value)` set in place of its lines.
fn host_env(set: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut env = parse_env(&deploy_file_with("host.env", &[]));
    // This machine's own address stands in for the file's 10.0.0.11.
    env.insert("HOST_ADDRESS".into(), "127.0.0.1".into());
    for (name, value) in set {
        env.insert((*name).to_owned(), (*value).to_owned());
    }
    env.into_iter().collect()
}

#[test]
fn the_fleets_placeholders_an_empty_token_and_a_readable_password_are_refused_at_start() {
    let shipped_config = deploy_file_with("runtime-config.toml", &[]);
    let private_config = deploy_file_with(
        "runtime-config.toml",
        &[("change-me-redis-password", "a-real-password")],
    );

    // As shipped: the chat token is a placeholder, refused before anything starts.
    let root = temp_dir();
    let started = Instant::now();
    let err = unit_refuses(root.path(), &host_env(&[]), &shipped_config, 0o600);
    assert!(
        err.contains("$CHAT_ADMIN_TOKEN") && err.contains("placeholder"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(30), "{err}");
    assert!(
        !root.path().join("state/data/sqlite_key_value.db").exists(),
        "nothing started"
    );

    // A real chat token: the admin API's placeholder is refused in turn.
    let root = temp_dir();
    let env = host_env(&[("CHAT_ADMIN_TOKEN", "chat-secret-1")]);
    let err = unit_refuses(root.path(), &env, &shipped_config, 0o600);
    assert!(
        err.contains("$UP_ADMIN_TOKEN") && err.contains("placeholder"),
        "{err}"
    );

    // Both tokens real: Redis's placeholder password is refused.
    let tokens = [
        ("CHAT_ADMIN_TOKEN", "chat-secret-1"),
        ("UP_ADMIN_TOKEN", "admin-secret-1"),
    ];
    let root = temp_dir();
    let err = unit_refuses(root.path(), &host_env(&tokens), &shipped_config, 0o600);
    assert!(
        err.contains("placeholder") && err.contains("requirepass"),
        "{err}"
    );

    // A real password in a config every user can read: refused, saying what to chmod.
    let root = temp_dir();
    let err = unit_refuses(root.path(), &host_env(&tokens), &private_config, 0o644);
    assert!(err.contains("chmod 600"), "{err}");
    assert!(
        !err.contains("a-real-password"),
        "the password is never shown: {err}"
    );

    // An empty token file is an error, not the admin API switched off.
    let root = temp_dir();
    // The unit's --data-dir, /var/lib/runtime-host/data.
    std::fs::create_dir_all(root.path().join("state/data")).unwrap();
    std::fs::write(root.path().join("state/data/admin_token"), "\n").unwrap();
    let env = host_env(&[
        ("CHAT_ADMIN_TOKEN", "chat-secret-1"),
        ("UP_ADMIN_TOKEN", ""),
    ]);
    let err = unit_refuses(root.path(), &env, &private_config, 0o600);
    assert!(
        err.contains("admin_token") && err.contains("is empty"),
        "{err}"
    );
}

/// A models directory holding a model that serves and one that cannot compile.
fn models_with_a_failure(dir: &Path) {
    std::fs::copy(component("echo-model"), dir.join("echo.wasm")).unwrap();
    std::fs::write(dir.join("broken.wasm"), b"\0asm but not a component").unwrap();
}

/// `/health` is 503 naming the model that failed, so a load balancer takes the host out of
/// rotation; `--health-ignores-failed-models` gives 200 again.
#[tokio::test(flavor = "multi_thread")]
async fn health_is_503_while_a_configured_model_does_not_serve() {
    let models = temp_dir();
    models_with_a_failure(models.path());
    let dir = models.path().to_str().unwrap();
    let c = Client::new();

    let stack = Stack::up(&["--models", dir], 4);
    let r = c.get(&stack.app("/health")).await;
    assert_eq!(r.status, 503, "{}", r.text());
    let v = r.value();
    assert_eq!(v["error_code"], "not_ready", "{v}");
    let failed = v["failed_models"].as_array().cloned().unwrap_or_default();
    assert_eq!(failed.len(), 1, "{v}");
    assert_eq!(failed[0]["name"], "broken", "{v}");
    assert!(
        !failed[0]["why"].as_str().unwrap_or_default().is_empty(),
        "{v}"
    );
    // The model that serves still serves.
    let echo = c.get(&stack.app("/models/echo/health")).await;
    assert_eq!(echo.status, 200, "{}", echo.text());

    // Once the broken model is gone from the watched directory, the host is ready again.
    std::fs::remove_file(models.path().join("broken.wasm")).unwrap();
    let started = Instant::now();
    loop {
        let r = c.get(&stack.app("/health")).await;
        if r.status == 200 {
            assert_eq!(r.value(), serde_json::json!({"status": "ok"}));
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "still {}: {}",
            r.status,
            r.text()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(stack);

    models_with_a_failure(models.path());
    let relaxed = Stack::up(&["--models", dir, "--health-ignores-failed-models"], 4);
    let r = c.get(&relaxed.app("/health")).await;
    assert_eq!(r.status, 200, "{}", r.text());
}
