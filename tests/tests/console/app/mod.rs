//! The web console and the app port of `runtime-host up`: every service on one origin,
//! routed as `spin.toml` routes them, and the console page driven in a real headless
//! Chromium (skipped, loudly, where Chromium is not installed).

use e2e_tests::browser::Browser;
use e2e_tests::spin::SpinApp;
use e2e_tests::{App, Client, Stack};
use hyper::Method;
use serde_json::{Value, json};
use std::collections::BTreeSet;

mod ask;
mod batch;
mod lists;
mod media;
mod pages;
use ask::ask_the_assistant;
use batch::batch_page;
use lists::{accessibility, chats, long_lists};
use pages::{models_pages, served_models, try_it};

/// Narrows the window to a phone's screen, 390 x 844 CSS pixels (a common handset), for the
/// pages' checks at phone width.
pub(crate) async fn phone_width(browser: &Browser) {
    browser
        .client
        .set_window_size(390, 844)
        .await
        .expect("resizing");
}

/// Asserts the page is no wider than the window: at phone width only the tables' own boxes
/// may scroll sideways, never the whole page.
async fn assert_no_sideways_scroll(browser: &Browser) {
    let overflow = browser
        .eval("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        .await;
    assert_eq!(
        overflow,
        json!(0),
        "the page scrolls sideways at phone width"
    );
}

/// The scripts and style sheets the page loads, found by following `assets/...` references
/// in the page and `./x.js` imports in the modules.
async fn assets_of_the_page(c: &Client, stack: &Stack) -> BTreeSet<String> {
    let page = c.get(&stack.app("/")).await.text();
    let mut todo: Vec<String> = page
        .split("assets/")
        .skip(1)
        .map(|s| s.chars().take_while(|c| !matches!(c, '"' | '\'')).collect())
        .collect();
    let mut seen = BTreeSet::new();
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) || !name.ends_with(".js") {
            continue;
        }
        let module = c.get(&stack.app(&format!("/assets/{name}"))).await.text();
        for import in module.split("from \"./").skip(1) {
            let file: String = import.chars().take_while(|c| *c != '"').collect();
            todo.push(format!("js/{file}"));
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread")]
async fn the_app_port_routes_every_service_as_spin_toml_does() {
    let stack = Stack::up(&[], 8);
    let c = Client::new();

    // The registry and chat answer the same on the app port as on their own.
    let direct = c.get(&stack.registry("/registry")).await.value();
    let via_app = c.get(&stack.app("/registry")).await.value();
    assert_eq!(via_app["count"], direct["count"]);
    assert_eq!(
        c.get(&stack.app("/api/chats")).await.value(),
        c.get(&stack.chat("/api/chats")).await.value()
    );
    let dialog = c.get(&stack.app("/api/dialog?id=welcome")).await;
    assert_eq!(dialog.status, 200, "{}", dialog.text());

    // Each model under /models/<name>/, the same deployment as on its registered port.
    let port = stack.model_port("molprop").await;
    let request = json!({"input_type": "text", "data": {"smiles": "CCO", "property": "logp"}});
    let own = c
        .post_json(&format!("http://127.0.0.1:{port}/predict"), &request, None)
        .await
        .value();
    let routed = c
        .post_json(&stack.app("/models/molprop/predict"), &request, None)
        .await
        .value();
    assert_eq!(routed["results"], own["results"]);
    let metrics = c.get(&stack.app("/models/molprop/metrics")).await.value();
    assert_eq!(
        metrics["requests_served"], 2,
        "one deployment behind both: {metrics}"
    );
    for name in ["minilm", "solubility", "iris"] {
        let r = c.get(&stack.app(&format!("/models/{name}/health"))).await;
        assert_eq!(r.status, 200, "{name}: {}", r.text());
    }
    // The router decides the path info; a client's own `spin-path-info` is dropped.
    let r = c
        .send(
            Method::GET,
            &stack.app("/models/molprop/health"),
            None,
            &[("spin-path-info", "/info")],
        )
        .await;
    assert_eq!(r.value()["status"], "ok", "{}", r.text());
    // A prefix matches whole segments only: /models/molprop2 is nobody's, so the console's
    // catch-all answers, with the JSON error body.
    c.get(&stack.app("/models/molprop2/health"))
        .await
        .assert_error(404, "not_found");

    // The console: the page, every asset it loads, its configuration.
    let page = c.get(&stack.app("/")).await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let csp = page.header("content-security-policy").unwrap_or_default();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    let assets = assets_of_the_page(&c, &stack).await;
    assert!(assets.len() >= 9, "{assets:?}");
    for name in &assets {
        let r = c.get(&stack.app(&format!("/assets/{name}"))).await;
        assert_eq!(r.status, 200, "{name}");
        let expected = match name.rsplit('.').next() {
            Some("js") => "text/javascript; charset=utf-8",
            Some("css") => "text/css; charset=utf-8",
            Some("svg") => "image/svg+xml",
            other => panic!("unexpected asset type {other:?}"),
        };
        assert_eq!(r.header("content-type"), Some(expected), "{name}");
        assert!(!r.body.is_empty(), "{name}");
    }
    let config = c.get(&stack.app("/console.json")).await.value();
    let models: BTreeSet<&str> = config["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        models,
        BTreeSet::from([
            "digits",
            "iris",
            "minilm",
            "molprop",
            "solubility",
            "spoken-digits",
            "textgen"
        ])
    );

    // A reload costs a 304; HEAD has no body; bad paths and methods get the JSON error.
    let tag = page.header("etag").expect("an ETag").to_owned();
    let again = c
        .send(
            Method::GET,
            &stack.app("/"),
            None,
            &[("if-none-match", &tag)],
        )
        .await;
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    let head = c
        .send(Method::HEAD, &stack.app("/assets/console.css"), None, &[])
        .await;
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    c.get(&stack.app("/assets/nothing.js"))
        .await
        .assert_error(404, "not_found");
    c.get(&stack.app("/assets/../index.html"))
        .await
        .assert_error(404, "not_found");
    let post = c
        .send(Method::POST, &stack.app("/"), Some(b"{}".to_vec()), &[])
        .await;
    post.assert_error(405, "method_not_allowed");
    assert_eq!(post.header("allow"), Some("GET, HEAD"));
    depictions(&c, &stack).await;
}

/// `/depict.svg`: a molecule drawn as SVG with its atoms and bonds; a SMILES the parser
/// refuses is a 400 naming the position; no SMILES, an empty one or one too long, clear
/// errors.
async fn depictions(c: &Client, stack: &Stack) {
    let url = |smiles: &str| {
        let q = service_client::percent_encode(smiles);
        stack.app(&format!("/depict.svg?smiles={q}"))
    };
    let caffeine = "Cn1cnc2c1c(=O)n(C)c(=O)n2C";
    let r = c.get(&url(caffeine)).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("image/svg+xml"));
    let svg = r.text();
    assert!(svg.starts_with("<svg") && svg.contains(&format!("<title>{caffeine}</title>")));
    assert!(
        svg.contains("data-atoms=\"14\"") && svg.contains("data-bonds=\"15\""),
        "{svg}"
    );
    assert_eq!(svg.matches("class=\"bond\"").count(), 15);
    assert!(!svg.contains("<script"), "a drawing holds no script");
    let broken = c.get(&url("C1CC(")).await;
    broken.assert_error(400, "invalid_field");
    let body = broken.value();
    let position: usize = broken
        .header("smiles-error-position")
        .expect("the position of the error")
        .parse()
        .unwrap();
    assert_eq!(position, 5, "the unclosed `(`: {body}");
    assert!(body["error"].as_str().unwrap().contains("position 5"));
    c.get(&stack.app("/depict.svg"))
        .await
        .assert_error(400, "missing_field");
    c.get(&url("  ")).await.assert_error(400, "missing_field");
    let long = "C".repeat(1001);
    c.get(&url(&long)).await.assert_error(400, "input_too_long");
    let hostile = c.get(&url("[Na+].[Cl-]")).await;
    assert_eq!(hostile.status, 200);
    assert!(hostile.text().contains("<title>[Na+].[Cl-]</title>"));
    let escaped = c.get(&url("C\"<script>")).await;
    escaped.assert_error(400, "invalid_field");
    assert_eq!(escaped.header("content-type"), Some("application/json"));
}

/// The console in headless Chromium against a real `up`: the models page lists molprop with
/// its port and process; a test example shows its result; the chats page opens a sample
/// dialog; a wrong admin token shows the chat service's 403 message, the right one appends;
/// a message written in the dialog's box gets the language model's reply.
/// Each page is saved as a screenshot under `target/console-screenshots/`.
#[tokio::test(flavor = "multi_thread")]
async fn the_console_works_in_a_real_browser() {
    let Some(browser) = Browser::start("the_console_works_in_a_real_browser", 1280, 1000).await
    else {
        return;
    };
    let stack = Stack::up(&[], 8);
    let c = Client::new();
    models_pages(&browser, &stack, &c).await;
    try_it(&browser, &stack, &c).await;
    batch_page(&browser, &stack, &c).await;
    chats(&browser, &stack, &c).await;
    ask_the_assistant(&browser, &stack, &c).await;
    long_lists(&browser, &stack, &c).await;
    accessibility(&browser, &stack).await;
    browser.close().await;
}

/// The same pages under Spin (issue 47 §1): the project's `spin.toml` under `spin up`, its
/// console listing the models it serves with their traffic and a model's tables, trying molprop's and iris's examples (molecules drawn, the parser's caret, the
/// applicability domain) and scoring a library on the batch page, the scenarios above run
/// unchanged against the other host.
#[tokio::test(flavor = "multi_thread")]
async fn the_console_under_spin_works_in_a_real_browser() {
    let Some(app) = SpinApp::up("the console under Spin", "t0ken") else {
        return;
    };
    let Some(browser) = Browser::start("the_console_under_spin", 1280, 1000).await else {
        return;
    };
    let c = Client::new();
    served_models(&browser, &app, &c).await;
    // Spin has no admin API: the Deployments section, which could not work, is not shown.
    let shown = pages::deployments_section_shown(&browser, &app).await;
    assert_eq!(shown, (false, true), "(admin API, section hidden)");
    try_it(&browser, &app, &c).await;
    batch_page(&browser, &app, &c).await;
    browser.close().await;
}

/// The Deployments section of the models page, against `up`'s admin API: the token shows the
/// deployments with status and version; a model deployed from a path serves; a reload keeps
/// serving; undeploy needs a second click; a wrong token shows the API's message.
#[tokio::test(flavor = "multi_thread")]
async fn the_deployments_section_manages_models_in_a_real_browser() {
    let Some(browser) = Browser::start("the_deployments_section", 1280, 1000).await else {
        return;
    };
    let models = e2e_tests::temp_dir();
    std::fs::copy(
        e2e_tests::component("molprop"),
        models.path().join("molprop.wasm"),
    )
    .unwrap();
    let stack = Stack::up(&["--models", models.path().to_str().unwrap()], 6);
    let token = std::fs::read_to_string(stack.data_dir().join("admin_token")).unwrap();
    let shown = pages::deployments_section_shown(&browser, &stack).await;
    assert_eq!(shown, (true, false), "(admin API, section hidden)");
    browser.goto(&stack.app("/#/models")).await;
    browser
        .wait_text("#deployments", |t| t.contains("Enter the admin token"))
        .await;
    browser.type_into("#deploy-token", token.trim()).await;
    browser.click("#deploy-show").await;
    let listed = browser
        .wait_text("#deployments", |t| {
            t.contains("molprop") && t.contains("serving")
        })
        .await;
    assert!(listed.contains("sha256:"), "{listed}");

    // Deploy from a path on the server.
    let echo = e2e_tests::component("echo-model");
    browser
        .type_into("#deploy-path", echo.to_str().unwrap())
        .await;
    browser.type_into("#deploy-name", "echo-ui").await;
    browser.click("#deploy-submit").await;
    browser
        .wait_text("#deploy-status", |t| t.contains("echo-ui is serving"))
        .await;
    browser
        .wait_text("#deployments", |t| t.contains("echo-ui"))
        .await;
    let c = Client::new();
    assert_eq!(
        c.get(&stack.app("/models/echo-ui/health")).await.status,
        200
    );
    browser.screenshot("deployments").await;
    // The models page, opened again, shows the model added while `up` runs.
    browser.goto(&stack.app("/#/chats")).await;
    browser.goto(&stack.app("/#/models")).await;
    browser
        .wait_text("#served-models", |t| t.contains("echo-ui"))
        .await;

    // Reload molprop: it serves on.
    browser.click(r#"button.reload[data-name="molprop"]"#).await;
    browser
        .wait_text("#deploy-status", |t| {
            t.contains("Reload molprop: molprop is serving")
        })
        .await;

    // Undeploy echo-ui: the first click arms the button, the second undeploys.
    browser
        .click(r#"button.undeploy[data-name="echo-ui"]"#)
        .await;
    browser
        .wait_text(r#"button.undeploy[data-name="echo-ui"]"#, |t| {
            t == "Confirm undeploy"
        })
        .await;
    browser
        .click(r#"button.undeploy[data-name="echo-ui"]"#)
        .await;
    browser
        .wait_text("#deploy-status", |t| t.contains("Undeploy echo-ui"))
        .await;
    browser
        .wait_text("#deployments", |t| {
            t.contains("molprop") && !t.contains("echo-ui")
        })
        .await;
    assert_eq!(
        c.get(&stack.app("/models/echo-ui/health")).await.status,
        404
    );

    // A wrong token: the API's own message.
    browser.type_into("#deploy-token", "not-the-token").await;
    browser.click("#deploy-show").await;
    browser
        .wait_text("#deployments", |t| t.contains("wrong admin token"))
        .await;
    browser.close().await;
}
