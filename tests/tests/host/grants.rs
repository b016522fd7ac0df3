//! What a component is granted beside the store: application variables (flags and the
//! environment) and read-only directory mounts, and the starts refused for bad ones.

use e2e_tests::{Client, HostBuilder, component, temp_dir};

#[tokio::test(flavor = "multi_thread")]
async fn variables_come_from_flags_and_environment_flags_winning() {
    let dir = temp_dir();
    let h = HostBuilder::new(component("testbed"), dir.path())
        .env("SPIN_VARIABLE_REGION", "env-region")
        .env("SPIN_VARIABLE_COLOUR", "env-colour")
        .variable("colour", "flag-colour")
        .start();
    let c = Client::new();
    assert_eq!(
        c.get(&h.url("/var?name=region")).await.value()["value"],
        "env-region"
    );
    assert_eq!(
        c.get(&h.url("/var?name=colour")).await.value()["value"],
        "flag-colour"
    );
    assert!(c.get(&h.url("/var?name=unset")).await.value()["value"].is_null());
}

/// Starts `runtime-host serve testbed` with `extra` flags, expects it to refuse to start,
/// and returns what it said on stderr.
fn refused_start(extra: &[&str]) -> String {
    let dir = temp_dir();
    let out = std::process::Command::new(e2e_tests::host_binary())
        .arg("serve")
        .arg(component("testbed"))
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .args(extra)
        .output()
        .unwrap();
    assert!(!out.status.success(), "started with {extra:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn invalid_variable_flag_is_refused_with_a_clear_message() {
    let err = refused_start(&["--variable", "Not-Valid=1"]);
    assert!(err.contains("invalid variable name"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn directories_are_mounted_read_only_at_their_guest_path() {
    let (dir, files) = (temp_dir(), temp_dir());
    std::fs::write(files.path().join("weights.txt"), "0.25 0.75").unwrap();
    let h = HostBuilder::new(component("testbed"), dir.path())
        .arg("--dir")
        .arg(format!("{}:/model", files.path().display()))
        .start();
    let c = Client::new();
    let r = c.get(&h.url("/file?path=/model/weights.txt")).await;
    assert_eq!(r.value()["text"], "0.25 0.75", "{}", r.text());
    // Writing is refused, and the host file is untouched.
    let r = c
        .post_raw(&h.url("/file?path=/model/weights.txt"), vec![], None)
        .await;
    assert_eq!(r.value()["refused"], true, "{}", r.text());
    let r = c
        .post_raw(&h.url("/file?path=/model/new.txt"), vec![], None)
        .await;
    assert_eq!(r.value()["refused"], true, "{}", r.text());
    assert_eq!(
        std::fs::read_to_string(files.path().join("weights.txt")).unwrap(),
        "0.25 0.75"
    );
    assert!(!files.path().join("new.txt").exists());
    // Nothing outside the mount is visible.
    for outside in ["/etc/hostname", "/model/../etc/hostname"] {
        let r = c.get(&h.url(&format!("/file?path={outside}"))).await;
        assert!(r.value()["error"].is_string(), "{outside}: {}", r.text());
    }
}

#[test]
fn a_missing_mount_directory_stops_the_start_with_its_name() {
    let err = refused_start(&["--dir", "/no/such/models:/model"]);
    assert!(err.contains("/no/such/models"), "{err}");
}
