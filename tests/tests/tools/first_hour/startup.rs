//! Start-up never drops a model: busy ports are passed over whatever order the models start
//! in, a model that fails is listed with why and a reload retries it, and an empty watched
//! directory is a stack waiting for models.

use e2e_tests::browser::Browser;
use e2e_tests::{Client, Stack, component, temp_dir, until};
use edge_api::registry::RegistryListing;
use hyper::Method;
use std::net::TcpListener;
use std::time::Duration;

/// Four models start at once while another program holds the first four ports of the
/// registry's range: every one of them comes up, on a free port, and the busy ports are
/// reserved rather than handed out again. Before, two models handed the
/// same busy port one after the other raced to reserve it and the loser gave up.
#[tokio::test(flavor = "multi_thread")]
async fn models_pass_over_ports_another_program_holds() {
    let models = temp_dir();
    let molprop = std::fs::read(component("molprop")).unwrap();
    for name in ["alpha", "beta", "gamma", "delta"] {
        std::fs::write(models.path().join(format!("{name}.wasm")), &molprop).unwrap();
    }
    let first = e2e_tests::port_block(12);
    let held: Vec<TcpListener> = (first..first + 4)
        .map(|p| TcpListener::bind(("127.0.0.1", p)).expect("the block's ports are free"))
        .collect();
    let held_ports: Vec<u16> = held
        .iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect();
    let data = temp_dir();
    let dir = models.path().to_str().unwrap();
    let stack = Stack::up_on(data.path(), &["--models", dir], first, 12);

    let listing: RegistryListing = Client::new().get(&stack.registry("/registry")).await.json();
    let (guards, deployed): (Vec<_>, Vec<_>) = listing
        .registrations
        .iter()
        .partition(|r| r.app_name.ends_with("/busy-port-guard"));
    let mut names: Vec<&str> = deployed.iter().map(|r| r.app_name.as_str()).collect();
    names.sort();
    let expected = ["alpha", "beta", "delta", "gamma"].map(|n| format!("runtime-host/{n}"));
    assert_eq!(names, expected, "{listing:?}\n{}", stack.log());
    for r in &deployed {
        assert!(
            !held_ports.contains(&r.port),
            "{} got busy port {}",
            r.app_name,
            r.port
        );
    }
    // Reservations hold only the busy ports.
    let reserved: Vec<u16> = guards.iter().map(|g| g.port).collect();
    assert!(
        reserved.iter().all(|p| held_ports.contains(p)),
        "{guards:?}"
    );
    for name in ["alpha", "beta", "gamma", "delta"] {
        let d = stack.deployment(name).await.expect("listed");
        assert_eq!(d["status"], "serving", "{d}");
        let health = Client::new()
            .get(&stack.app(&format!("/models/{name}/health")))
            .await;
        assert_eq!(health.status, 200, "{name}: {}", health.text());
    }
    assert!(
        !stack.log().contains("not moving on"),
        "no model gave up:\n{}",
        stack.log()
    );

    // The console counts the models' registrations and names the busy ports apart (before,
    // "8 registrations" for 4 models, the reservations listed as models).
    if let Some(browser) = Browser::start("busy ports on the console", 1280, 900).await {
        browser.goto(&stack.app("/#/models")).await;
        let table = browser
            .wait_text("#registrations table", |t| t.contains("runtime-host/delta"))
            .await;
        assert!(table.contains("4 registrations"), "{table}");
        assert!(!table.contains("busy-port-guard"), "{table}");
        if !reserved.is_empty() {
            let busy = browser.text("#busy-ports").await;
            for port in &reserved {
                assert!(busy.contains(&port.to_string()), "{busy}");
            }
        }
        browser.close().await;
    }
    drop(held);
}

/// A model that cannot start (a `.wasm` that is not a component) does not stop the others,
/// is listed by the admin API as `failed` with why, and a reload, once its file is fixed,
/// deploys it. Before, `up` itself failed on it; a model failing later was not listed and
/// `reload` answered "no deployment named ...".
#[tokio::test(flavor = "multi_thread")]
async fn a_model_that_fails_at_start_is_listed_and_a_reload_retries_it() {
    let models = temp_dir();
    std::fs::write(
        models.path().join("molprop.wasm"),
        std::fs::read(component("molprop")).unwrap(),
    )
    .unwrap();
    let broken = models.path().join("later.wasm");
    std::fs::write(&broken, b"\0asm not really").unwrap();
    let dir = models.path().to_str().unwrap();
    // Not watched: only a reload can bring it back.
    let stack = Stack::up(&["--models", dir, "--watch-interval", "0s"], 4);

    let molprop = stack.deployment("molprop").await.expect("molprop listed");
    assert_eq!(molprop["status"], "serving", "{molprop}");
    let later = stack
        .deployment("later")
        .await
        .expect("the failed model is listed");
    assert_eq!(later["status"], "failed", "{later}");
    let why = later["refused"].as_str().unwrap_or_default();
    assert!(why.contains("later"), "the reason names the model: {later}");
    assert!(why.len() > 20, "a reason, not a bare status: {later}");

    // A reload with the file still broken fails again, with why; the entry stays.
    let again = stack.admin(Method::POST, "/later/reload", None).await;
    assert!(again.status >= 400, "{}", again.text());
    assert!(
        !again.value()["error"]
            .as_str()
            .unwrap_or_default()
            .is_empty()
    );
    assert_eq!(stack.deployment("later").await.unwrap()["status"], "failed");

    std::fs::write(&broken, std::fs::read(component("echo-model")).unwrap()).unwrap();
    let reloaded = stack.admin(Method::POST, "/later/reload", None).await;
    assert_eq!(reloaded.status, 200, "{}", reloaded.text());
    let deployment = &reloaded.value()["deployment"];
    assert_eq!(deployment["status"], "serving", "{}", reloaded.text());
    assert_eq!(deployment["refused"], serde_json::Value::Null);
    let health = Client::new().get(&stack.app("/models/later/health")).await;
    assert_eq!(health.status, 200, "{}", health.text());
}

/// `up --models DIR` on an empty directory starts and waits: a model dropped in later is
/// deployed. Before, it refused to start ("no models in DIR").
#[tokio::test(flavor = "multi_thread")]
async fn an_empty_models_directory_waits_for_models() {
    let models = temp_dir();
    let dir = models.path().to_str().unwrap();
    let stack = Stack::up(&["--models", dir, "--watch-interval", "300ms"], 4);
    let list = stack.admin(Method::GET, "", None).await;
    assert_eq!(
        list.value()["deployments"],
        serde_json::json!([]),
        "{}",
        list.text()
    );

    let staged = models.path().join(".molprop.wasm");
    std::fs::write(&staged, std::fs::read(component("molprop")).unwrap()).unwrap();
    std::fs::rename(&staged, models.path().join("molprop.wasm")).unwrap();
    let c = Client::new();
    let within = Duration::from_secs(90);
    until(
        "molprop deployed from the watched directory",
        within,
        || async { c.get(&stack.app("/models/molprop/health")).await.status == 200 },
    )
    .await;
}
