//! A registry that dies, is missing at start-up, or is not there at all.

use super::{eventually, listing, model, registry};
use e2e_tests::{Client, HostBuilder, component, temp_dir};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread")]
async fn keeps_serving_when_the_registry_dies_and_still_exits_cleanly() {
    let (rdir, mdir) = (temp_dir(), temp_dir());
    let c = Client::new();
    let (reg, _) = registry(rdir.path(), &[]);
    let mut m = model(
        mdir.path(),
        &reg.base_url(),
        &["--heartbeat-interval", "200ms"],
    )
    .start();
    reg.kill9();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        c.get(&m.url("/health")).await.status,
        200,
        "serving on without the registry"
    );
    let started = Instant::now();
    m.terminate();
    let status = m.wait(Duration::from_secs(10));
    assert!(status.success(), "{status:?}\n{}", m.output());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "exit within 5 s: {:?}",
        started.elapsed()
    );
    assert!(
        m.output().contains("unregistration skipped"),
        "{}",
        m.output()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn registers_once_a_missing_registry_comes_up() {
    let (rdir, mdir) = (temp_dir(), temp_dir());
    let c = Client::new();
    let reg_port = e2e_tests::free_port();
    let reg_url = format!("http://127.0.0.1:{reg_port}");
    let preferred = e2e_tests::port_block(3);
    let m = model(
        mdir.path(),
        &reg_url,
        &[
            "--preferred-port",
            &preferred.to_string(),
            "--registry-wait",
            "500ms",
            "--heartbeat-interval",
            "300ms",
        ],
    )
    .start();
    assert_eq!(
        m.addr.port(),
        preferred,
        "serves on the preferred port without a registry"
    );
    assert_eq!(c.get(&m.url("/health")).await.status, 200);
    let reg = HostBuilder::registry(rdir.path())
        .arg("--ports")
        .arg(format!("{preferred}-{}", preferred + 2))
        .listen_on(&format!("127.0.0.1:{reg_port}"))
        .start();
    let pid = m.pid();
    eventually(
        "the model registers with the late registry",
        Duration::from_secs(10),
        || {
            let (c, reg) = (c.clone(), &reg);
            async move {
                listing(&c, reg)
                    .await
                    .registrations
                    .iter()
                    .any(|r| r.port == preferred && r.process_id == pid)
            }
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_registry_and_no_preferred_port_is_a_clear_error() {
    let mdir = temp_dir();
    let out = std::process::Command::new(e2e_tests::host_binary())
        .arg("model")
        .arg(component("molprop"))
        .args([
            "--registry",
            &format!("http://127.0.0.1:{}", e2e_tests::free_port()),
            "--registry-wait",
            "300ms",
            "--data-dir",
        ])
        .arg(mdir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--preferred-port") && err.contains("runtime-host registry"),
        "{err}"
    );
}
