//! The console's pictures in headless Chromium against a real `up` (issue 28): a trained
//! model's page plots the evidence its own `/evidence` serves (parity and residual plots for
//! solubility, the confusion matrix for iris, nothing for molprop); a model's traffic is
//! charted live while predictions run; the pages read at phone width and by keyboard. The
//! plots and the traffic run under Spin too (issue 47 §1), from the models' own `/evidence`
//! and `/metrics` there. Skipped, loudly, where Chromium (or Spin) is not installed.

use e2e_tests::browser::Browser;
use e2e_tests::spin::SpinApp;
use e2e_tests::{App, Client, Stack};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Evaluates `script` until it returns something `ready` accepts (10 s at most).
async fn eventually(browser: &Browser, script: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    loop {
        let v = browser.eval(script).await;
        if ready(&v) {
            return v;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{script} gave {v}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Scrolls the page so that `selector` is at the top (for the screenshot).
async fn scroll_to(browser: &Browser, selector: &str) {
    browser
        .eval(&format!(
            "document.querySelector({selector:?}).scrollIntoView(); return null"
        ))
        .await;
}

/// How many of `selector` the page has.
fn count(selector: &str) -> String {
    format!("return document.querySelectorAll({selector:?}).length")
}

#[tokio::test(flavor = "multi_thread")]
async fn model_pages_plot_quality_and_live_traffic_in_a_real_browser() {
    let Some(browser) = Browser::start("model_pages_plot_quality", 1280, 1000).await else {
        return;
    };
    let stack = Stack::up(&[], 8);
    let c = Client::new();
    regression_plots(&browser, &stack, &c).await;
    confusion_matrix(&browser, &stack, &c).await;
    live_traffic(&browser, &stack, &c, true).await;
    phone_and_keyboard(&browser, &stack).await;
    browser.close().await;
}

/// The same pictures from the app under Spin: the console's plots of solubility's and iris's
/// evidence, and molprop's traffic charted from its `/metrics` on Spin's store.
#[tokio::test(flavor = "multi_thread")]
async fn under_spin_model_pages_plot_quality_and_live_traffic_in_a_real_browser() {
    let Some(app) = SpinApp::up("the console's pictures under Spin", "t0ken") else {
        return;
    };
    let Some(browser) = Browser::start("model_pages_under_spin", 1280, 1000).await else {
        return;
    };
    let c = Client::new();
    regression_plots(&browser, &app, &c).await;
    confusion_matrix(&browser, &app, &c).await;
    live_traffic(&browser, &app, &c, false).await;
    browser.close().await;
}

/// Solubility: one point per test molecule in both plots, axes with ticks, the diagonal and
/// the domain threshold drawn, the figures of /evidence in the caption.
async fn regression_plots(browser: &Browser, stack: &impl App, c: &Client) {
    let evidence = c
        .get(&stack.app("/models/solubility/evidence"))
        .await
        .value();
    let parity = &evidence["parity"];
    let points = parity["points"].as_array().unwrap().len();
    browser.goto(&stack.app("/#/models/solubility")).await;
    browser
        .wait_text("#quality", |t| t.contains("Parity"))
        .await;
    let n = eventually(browser, &count("#parity-plot circle.point"), |v| {
        v.as_u64() > Some(0)
    })
    .await;
    assert_eq!(n, json!(points), "one point per test molecule");
    let residuals = evidence["residuals"]["points"].as_array().unwrap().len();
    assert_eq!(
        browser.eval(&count("#residual-plot circle.point")).await,
        json!(residuals)
    );
    assert_eq!(
        browser.eval(&count("#parity-plot line.diagonal")).await,
        json!(1)
    );
    assert_eq!(
        browser.eval(&count("#residual-plot line.threshold")).await,
        json!(1)
    );
    let ticks = browser.eval(&count("#parity-plot text.tick")).await;
    assert!(ticks.as_u64().unwrap() >= 6, "axes with ticks: {ticks}");
    // The plot is drawn at a readable size and every point inside its frame.
    let geometry = browser
        .eval(
            "const svg = document.querySelector('#parity-plot svg'); const box = svg.getBoundingClientRect(); \
             const inside = [...svg.querySelectorAll('circle.point')].every((c) => { \
               const r = c.getBoundingClientRect(); \
               return r.left >= box.left && r.right <= box.right && r.top >= box.top && r.bottom <= box.bottom; }); \
             return { width: box.width, height: box.height, inside };",
        )
        .await;
    assert!(geometry["width"].as_f64().unwrap() > 300.0, "{geometry}");
    assert!(geometry["height"].as_f64().unwrap() > 200.0, "{geometry}");
    assert_eq!(geometry["inside"], true, "{geometry}");
    let caption = browser.text("#parity-plot figcaption").await;
    let rmse = format!(
        "RMSE {}",
        (parity["rmse"].as_f64().unwrap() * 1000.0).round() / 1000.0
    );
    assert!(caption.contains(&rmse), "{caption} shows {rmse}");
    assert_eq!(browser.eval(&count("#confusion-plot")).await, json!(0));
    assert_eq!(browser.low_contrast_texts().await, json!([]), "contrast");
    scroll_to(browser, "#quality").await;
    browser.screenshot("model-solubility").await;
}

/// Iris: the confusion matrix's cells add up to the test rows, its diagonal to the hits.
async fn confusion_matrix(browser: &Browser, stack: &impl App, c: &Client) {
    let evidence = c.get(&stack.app("/models/iris/evidence")).await.value();
    let counts: Vec<Vec<u64>> =
        serde_json::from_value(evidence["confusion"]["counts"].clone()).unwrap();
    browser.goto(&stack.app("/#/models/iris")).await;
    browser
        .wait_text("#quality", |t| t.contains("Confusion"))
        .await;
    let cells = browser
        .eval("return [...document.querySelectorAll('#confusion-plot text.count')].map((t) => Number(t.textContent))")
        .await;
    let shown: Vec<u64> = serde_json::from_value(cells).unwrap();
    assert_eq!(shown, counts.concat(), "the cells, row by row");
    assert_eq!(browser.eval(&count("#parity-plot")).await, json!(0));
    assert_eq!(browser.low_contrast_texts().await, json!([]), "contrast");
    scroll_to(browser, "#quality").await;
    browser.screenshot("model-iris").await;
    // A model without evidence shows no frame at all.
    browser.goto(&stack.app("/#/models/molprop")).await;
    browser
        .wait_text("#model-status", |t| t.contains("Requests served"))
        .await;
    assert_eq!(browser.eval(&count("#quality")).await, json!(0));
}

/// Molprop's traffic: while predictions run, the chart gains points and the figures show
/// requests per second and latency (percentiles from the host's metrics, or the mean from the
/// model's own `/metrics` where the host has none).
/// `host_metrics`: whether the host serves Prometheus metrics (runtime-host: latency
/// percentiles), or only the model's `/metrics` (Spin: the mean).
async fn live_traffic(browser: &Browser, stack: &impl App, c: &Client, host_metrics: bool) {
    browser.goto(&stack.app("/#/models/molprop")).await;
    browser
        .wait_text("#traffic", |t| t.contains("Traffic"))
        .await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load = {
        let (c, url, stop) = (
            c.clone(),
            stack.app("/models/molprop/predict"),
            stop.clone(),
        );
        tokio::spawn(async move {
            let body = json!({"input_type": "text", "data": {"text": "CCO", "property": "logp"}});
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                assert_eq!(c.post_json(&url, &body, None).await.status, 200);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };
    let (latency, source) = match host_metrics {
        true => ("p99", "host's metrics"),
        false => ("mean", "model's /metrics"),
    };
    let now = browser
        .wait_text("#traffic-now", |t| {
            t.contains(latency) && !t.contains(" 0 requests/s") && t.contains(" ms")
        })
        .await;
    let said = browser.text("#traffic-source").await;
    assert!(said.contains(source), "{said}");
    let points = "return Number(document.querySelector('#traffic-charts svg.traffic-rps path.series').dataset.points)";
    let before = browser.eval(points).await.as_u64().unwrap();
    let after = eventually(browser, points, |v| v.as_u64() > Some(before)).await;
    println!("traffic: {now}; chart points {before} -> {after}");
    scroll_to(browser, "#traffic").await;
    browser.screenshot("model-molprop-traffic").await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    load.await.unwrap();
}

/// At phone width nothing scrolls sideways and the plots shrink to the screen; the try-it
/// page's example reaches the answer and its drawing from the keyboard alone.
async fn phone_and_keyboard(browser: &Browser, stack: &Stack) {
    crate::console::app::phone_width(browser).await;
    browser.goto(&stack.app("/#/models/solubility")).await;
    browser
        .wait_text("#quality", |t| t.contains("Parity"))
        .await;
    let layout = browser
        .eval(
            "return { overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth, \
             plot: document.querySelector('#parity-plot svg').getBoundingClientRect().width, \
             screen: document.documentElement.clientWidth }",
        )
        .await;
    assert_eq!(layout["overflow"], 0, "{layout}");
    assert!(
        layout["plot"].as_f64() <= layout["screen"].as_f64(),
        "{layout}"
    );
    browser.screenshot("model-solubility-phone").await;

    // Keyboard: Tab to the first example and press Enter; the answer shows the molecule.
    browser.goto(&stack.app("/#/try/solubility")).await;
    browser.wait_text("ul.examples", |t| !t.is_empty()).await;
    let first = browser
        .client
        .find(fantoccini::Locator::Css("ul.examples button"))
        .await
        .unwrap();
    first
        .send_keys(&char::from(fantoccini::key::Key::Enter).to_string())
        .await
        .unwrap();
    browser
        .wait_text("#result-area", |t| t.contains("Result:"))
        .await;
    let drawn = eventually(
        browser,
        "const i = document.querySelector('#result-area img.structure'); return i && i.complete ? i.naturalWidth : 0",
        |v| v.as_u64() > Some(0),
    )
    .await;
    assert!(drawn.as_u64().unwrap() > 50);
    browser.screenshot("try-solubility-phone").await;
}
