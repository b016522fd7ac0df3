//! What the admin API deploys outlives `up` (issue 62, item 3): started again on the same
//! data directory, `up` deploys the same models under the same names, from the same files
//! (the same version), and a model undeployed before the restart stays gone. Listings say
//! where each model came from (`directory` for the models directory's, `api` only for the
//! admin API's), and the 404 for an unknown model names every model serving, the watched
//! directory's and the API's included.

use super::{put, tagged, until};
use e2e_tests::{Client, Stack, component, temp_dir};
use hyper::Method;
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn admin_api_deployments_come_back_after_a_restart_and_removed_ones_do_not() {
    let models = temp_dir();
    let echo = component("echo-model");
    put(
        &models.path().join("echo.wasm"),
        &std::fs::read(&echo).unwrap(),
    );
    let dir = models.path().to_str().unwrap();
    let data = temp_dir();
    let args = ["--models", dir, "--watch-interval", "300ms"];
    let mut stack = Stack::up_at(data.path(), &args, 8);
    let c = Client::new();

    // Two deployments through the API, from a file of their own; one undeployed again.
    let elsewhere = temp_dir();
    let file = elsewhere.path().join("echo-api.wasm");
    put(&file, &std::fs::read(&echo).unwrap());
    for name in ["api-kept", "api-removed"] {
        let body = json!({"path": file, "name": name});
        let r = stack.admin(Method::POST, "", Some(body)).await;
        assert_eq!(r.status, 201, "{}", r.text());
    }
    let r = stack.admin(Method::DELETE, "/api-removed", None).await;
    assert_eq!(r.status, 200, "{}", r.text());
    // A new version, reloaded: the one to come back.
    let first = stack.deployment("api-kept").await.unwrap()["version"].clone();
    put(&file, &tagged(&echo, "second"));
    let r = stack.admin(Method::POST, "/api-kept/reload", None).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_ne!(r.value()["deployment"]["version"], first, "{}", r.text());
    // A model the watched directory gains while `up` runs.
    put(
        &models.path().join("watched.wasm"),
        &std::fs::read(&echo).unwrap(),
    );
    until("the watched directory's new model serves", || {
        let (c, url) = (c.clone(), stack.app("/models/watched/health"));
        async move { c.get(&url).await.status == 200 }
    })
    .await;

    // The console lists them all too.
    let config = c.get(&stack.app("/console.json")).await.value();
    assert_eq!(config, json!({"models": ["echo", "api-kept", "watched"]}));
    // The unknown model's 404 names every model serving, however it came.
    let unknown = c.get(&stack.app("/models/nope/predict")).await;
    let unknown = unknown.assert_error(404, "not_found");
    assert!(
        unknown
            .error
            .ends_with("the models are: api-kept, echo, watched"),
        "{}",
        unknown.error
    );

    let kept = stack.deployment("api-kept").await.expect("api-kept listed");
    assert_eq!(kept["origin"], "api", "{kept}");
    assert_eq!(
        stack.deployment("echo").await.unwrap()["origin"],
        "directory"
    );
    assert_eq!(
        stack.deployment("watched").await.unwrap()["origin"],
        "directory"
    );
    let before = c.get(&stack.app("/models/api-kept/info")).await;
    assert_eq!(before.status, 200, "{}", before.text());
    assert!(stack.stop(Duration::from_secs(60)).success());
    drop(stack);

    // Started again on the same data directory.
    let stack = Stack::up_at(data.path(), &args, 8);
    let again = stack
        .deployment("api-kept")
        .await
        .expect("api-kept came back");
    assert_eq!(again["origin"], "api", "{again}");
    assert_eq!(again["status"], "serving", "{again}");
    assert_eq!(again["version"], kept["version"], "the same files: {again}");
    assert_eq!(again["source"], kept["source"], "{again}");
    let after = c.get(&stack.app("/models/api-kept/info")).await;
    assert_eq!(after.status, 200, "{}", after.text());
    assert_eq!(after.value(), before.value());
    assert!(stack.deployment("api-removed").await.is_none());
    let gone = c.get(&stack.app("/models/api-removed/health")).await;
    gone.assert_error(404, "not_found");
    assert_eq!(
        stack.deployment("watched").await.unwrap()["origin"],
        "directory"
    );

    // Undeployed now, it does not come back either.
    let r = stack.admin(Method::DELETE, "/api-kept", None).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let mut stack = stack;
    assert!(stack.stop(Duration::from_secs(60)).success());
    drop(stack);
    let stack = Stack::up_at(data.path(), &args, 8);
    assert!(stack.deployment("api-kept").await.is_none());
    let listed = stack.admin(Method::GET, "", None).await.value();
    let names: Vec<&str> = listed["deployments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "watched"]);
}

/// Entries of the list that a start does not deploy stay in it, through the admin API's
/// next change: one whose name the watched directory took, one changed by hand into a name
/// the API refuses (never deployed), and, under `--copies 2`, every one. An undeploy of a
/// name kept but not deployed forgets it.
#[tokio::test(flavor = "multi_thread")]
async fn entries_not_deployed_at_start_stay_in_the_list() {
    let models = temp_dir();
    let echo = component("echo-model");
    put(
        &models.path().join("echo.wasm"),
        &std::fs::read(&echo).unwrap(),
    );
    let elsewhere = temp_dir();
    let file = elsewhere.path().join("echo-api.wasm");
    put(&file, &std::fs::read(&echo).unwrap());
    let data = temp_dir();
    let list = data.path().join("api_deployments.json");
    let entry = |name: &str| json!({"name": name, "path": file, "version": ""});
    let kept = json!({"deployments": [entry("echo"), entry("../../escape")]});
    std::fs::write(&list, kept.to_string()).unwrap();
    let names = || -> Vec<String> {
        let text = std::fs::read_to_string(&list).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let each = value["deployments"].as_array().unwrap().iter();
        let mut names: Vec<String> = each.map(|d| d["name"].as_str().unwrap().into()).collect();
        names.sort();
        names
    };
    let dir = models.path().to_str().unwrap();
    for copies in ["1", "2"] {
        let args = ["--models", dir, "--copies", copies];
        let mut stack = Stack::up_at(data.path(), &args, 8);
        assert!(stack.deployment("../../escape").await.is_none());
        let body = json!({"path": file, "name": format!("api-{copies}")});
        let r = stack.admin(Method::POST, "", Some(body)).await;
        assert_eq!(r.status, 201, "--copies {copies}: {}", r.text());
        let expected: &[&str] = match copies {
            "1" => &["../../escape", "api-1", "echo"],
            _ => &["../../escape", "api-1", "api-2", "echo"],
        };
        assert_eq!(names(), expected, "--copies {copies}");
        assert!(stack.stop(Duration::from_secs(60)).success());
    }
    // Under --copies 2 nothing kept is deployed: an undeploy forgets the entry.
    let args = ["--models", dir, "--copies", "2"];
    let stack = Stack::up_at(data.path(), &args, 8);
    let r = stack.admin(Method::DELETE, "/api-1", None).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(names(), ["../../escape", "api-2", "echo"]);
}
