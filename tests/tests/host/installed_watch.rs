//! `up` without `--models` watches its installation's models directory (issue 62, item 3):
//! docs/models.md says a running `up` picks up a new model directory in `models/`, which held
//! only for `--models DIR`. Installed as docs/operating.md says, a model dropped into
//! `<prefix>/lib/runtime-host/models/` while `up` runs is deployed, listed with origin
//! `directory` (the installation's own models with `installation`), named by the unknown
//! model's 404, and removed when its file goes.

use super::installation::{InstalledUp, install};
use e2e_tests::{Client, temp_dir};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn an_installed_up_deploys_what_comes_into_its_models_directory() {
    let root = temp_dir();
    let prefix = root.path().join("prefix");
    let binary = install(&prefix, true);
    let models = prefix.join("lib/runtime-host/models");
    let data = root.path().join("data");
    let up = InstalledUp::start(
        &binary,
        &data,
        root.path(),
        ("UP_ADMIN_TOKEN", "installed-watch-token"),
    );
    let app_port = up.app_port;
    let c = Client::new();
    let app = |path: &str| format!("http://127.0.0.1:{app_port}{path}");

    // A model written beside and renamed into place, as a deployment tool should.
    let echo = std::fs::read(e2e_tests::component("echo-model")).unwrap();
    std::fs::write(models.join("echo.partial"), echo).unwrap();
    std::fs::rename(models.join("echo.partial"), models.join("echo.wasm")).unwrap();
    e2e_tests::until("the new model serves", Duration::from_secs(120), || {
        let (c, url) = (c.clone(), app("/models/echo/health"));
        async move { c.get(&url).await.status == 200 }
    })
    .await;

    let auth = [("authorization", "Bearer installed-watch-token")];
    let admin = app("/admin/deployments");
    let list = c.send(hyper::Method::GET, &admin, None, &auth).await;
    assert_eq!(list.status, 200, "{}", list.text());
    let listed = list.value();
    let origin = |name: &str| {
        let all = listed["deployments"].as_array().unwrap();
        let found = all.iter().find(|d| d["name"] == name);
        found.map(|d| d["origin"].as_str().unwrap().to_owned())
    };
    assert_eq!(
        origin("molprop").as_deref(),
        Some("installation"),
        "{listed}"
    );
    assert_eq!(origin("echo").as_deref(), Some("directory"), "{listed}");

    let unknown = c.get(&app("/models/nope/health")).await;
    let unknown = unknown.assert_error(404, "not_found");
    assert!(
        unknown.error.contains("echo") && unknown.error.contains("molprop"),
        "{}",
        unknown.error
    );

    std::fs::remove_file(models.join("echo.wasm")).unwrap();
    e2e_tests::until("the removed model is gone", Duration::from_secs(60), || {
        let (c, url) = (c.clone(), app("/models/echo/health"));
        async move { c.get(&url).await.status == 404 }
    })
    .await;

    up.stop();
}
