//! `runtime-host up`: registry, chat and 36 model deployments in one process (nine each of
//! molprop, the embedding model minilm, and the repository's two ONNX models, solubility and
//! iris); Ctrl-C leaves the registry empty and exits 0.

use e2e_tests::{Client, HostBuilder, host_binary, temp_dir};
use edge_api::registry::RegistryListing;
use std::collections::HashSet;
use std::process::{Command, Stdio};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn up_runs_36_models_of_four_kinds_on_distinct_ports_and_stops_cleanly() {
    let dir = temp_dir();
    let (reg_port, chat_port) = (e2e_tests::free_port(), e2e_tests::free_port());
    let first = e2e_tests::port_block(45);
    let ports = format!("{first}-{}", first + 44);
    let mut child = Command::new(host_binary())
        .args(["up", "--copies", "9", "--ports", &ports])
        .env("RUNTIME_HOST_CACHE_DIR", e2e_tests::shared_cache_dir())
        .args([
            "--registry-port",
            &reg_port.to_string(),
            "--chat-port",
            &chat_port.to_string(),
            "--data-dir",
        ])
        .arg(dir.path())
        .arg("--ai-models-dir")
        .arg(e2e_tests::ai_models_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    e2e_tests::wait_for_stack_ready(&mut child, Duration::from_secs(180));
    let c = Client::new();
    let list: RegistryListing = c
        .get(&format!("http://127.0.0.1:{reg_port}/registry"))
        .await
        .json();
    // Models register as runtime-host/<name>; a port some other process happens to hold would
    // show up as a busy-port reservation beside them, which is correct behaviour.
    let models: Vec<_> = list
        .registrations
        .iter()
        .filter(|r| !r.app_name.ends_with("busy-port-guard"))
        .collect();
    assert_eq!(models.len(), 36, "{list:?}");
    let distinct: HashSet<u16> = models.iter().map(|r| r.port).collect();
    assert_eq!(distinct.len(), 36, "36 distinct ports");
    let kinds: HashSet<&str> = models.iter().map(|r| r.model_name.as_str()).collect();
    assert_eq!(
        kinds,
        HashSet::from(["molprop", "minilm", "solubility", "iris"])
    );
    assert!(models.iter().all(|r| r.process_id == child.id()));
    for port in &distinct {
        let r = c.get(&format!("http://127.0.0.1:{port}/health")).await;
        assert_eq!(r.status, 200, "model on {port}: {}", r.text());
    }
    let chats = c
        .get(&format!("http://127.0.0.1:{chat_port}/api/chats"))
        .await
        .value();
    assert!(
        chats.as_array().is_some_and(|a| a.len() >= 3),
        "sample dialogs loaded"
    );
    let rss = std::fs::read_to_string(format!("/proc/{}/status", child.id()))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS"))
                .map(str::to_owned)
        });
    println!(
        "runtime-host up with registry, chat and 36 models: {}",
        rss.unwrap_or_default()
    );

    e2e_tests::interrupt(&child);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    // The registry's store holds no live registration afterwards.
    let reg = HostBuilder::registry(dir.path())
        .arg("--ports")
        .arg(&ports)
        .start();
    let after: RegistryListing = c.get(&reg.url("/registry")).await.json();
    assert_eq!(
        after.count, 0,
        "every model unregistered before the registry stopped"
    );
}
