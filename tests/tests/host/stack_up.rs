//! `runtime-host up`: registry, chat and 42 model deployments in one process (six each of
//! molprop, the embedding model minilm, the text generation model textgen, and the
//! repository's four ONNX models: solubility, iris, the picture model digits and the sound
//! model spoken-digits); Ctrl-C leaves the registry empty and exits 0.

use e2e_tests::stack::{SHIPPED_MODELS, TEXT_MODEL};
use e2e_tests::{Client, HostBuilder, Stack};
use edge_api::registry::RegistryListing;
use std::collections::HashSet;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn up_runs_42_models_of_seven_kinds_on_distinct_ports_and_stops_cleanly() {
    let mut stack = Stack::up(&["--copies", "6"], 45);
    let c = Client::new();
    let list: RegistryListing = c.get(&stack.registry("/registry")).await.json();
    // Models register as runtime-host/<name>; a port some other process happens to hold would
    // show up as a busy-port reservation beside them, which is correct behaviour.
    let models: Vec<_> = list
        .registrations
        .iter()
        .filter(|r| !r.app_name.ends_with("busy-port-guard"))
        .collect();
    assert_eq!(models.len(), 42, "{list:?}");
    let distinct: HashSet<u16> = models.iter().map(|r| r.port).collect();
    assert_eq!(distinct.len(), 42, "42 distinct ports");
    let kinds: HashSet<&str> = models.iter().map(|r| r.model_name.as_str()).collect();
    assert_eq!(
        kinds,
        SHIPPED_MODELS
            .into_iter()
            .chain([TEXT_MODEL])
            .collect::<HashSet<_>>()
    );
    assert!(models.iter().all(|r| r.process_id == stack.pid()));
    for port in &distinct {
        let r = c.get(&format!("http://127.0.0.1:{port}/health")).await;
        assert_eq!(r.status, 200, "model on {port}: {}", r.text());
    }
    let chats = c.get(&stack.chat("/api/chats")).await.value();
    assert!(
        chats.as_array().is_some_and(|a| a.len() >= 3),
        "sample dialogs loaded"
    );
    let rss = std::fs::read_to_string(format!("/proc/{}/status", stack.pid()))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS"))
                .map(str::to_owned)
        });
    println!(
        "runtime-host up with registry, chat and 42 models: {}",
        rss.unwrap_or_default()
    );

    let status = stack.stop(Duration::from_secs(60));
    assert!(status.success(), "{status:?}");
    // The registry's store holds no live registration afterwards.
    let reg = HostBuilder::registry(stack.data_dir()).start();
    let after: RegistryListing = c.get(&reg.url("/registry")).await.json();
    assert_eq!(
        after.count, 0,
        "every model unregistered before the registry stopped"
    );
}

/// `up` starts its registry by the same recipe as `runtime-host registry`: the same flags,
/// refused the same way (before, `up` took `--ttl 0` and hard-coded the monitor interval).
#[test]
fn up_and_registry_share_the_registrys_start_up() {
    let dir = e2e_tests::temp_dir();
    for command in [&["registry", "--listen", "127.0.0.1:0"][..], &["up"][..]] {
        for (flag, value, why) in [
            ("--ttl", "0", "--ttl must be at least 1 second"),
            ("--monitor-interval", "0s", "must be a positive duration"),
        ] {
            // Bounded: a regression would start the stack instead of refusing it.
            let data = dir.path().display().to_string();
            let args: Vec<&str> = command
                .iter()
                .copied()
                .chain([flag, value, "--data-dir", &data])
                .collect();
            let err = e2e_tests::host_refuses(&args, Duration::from_secs(10));
            assert!(err.contains(why), "{command:?} {flag} {value}: {err}");
        }
    }
}
