//! The models pages and a model's try-it form, in the browser. (The batch page: `batch`.)

use super::*;

/// Registrations with port, process and liveness; one model's tables.
pub(crate) async fn models_pages(browser: &Browser, stack: &Stack, c: &Client) {
    let port = stack.model_port("molprop").await;
    // Models: the registration row of molprop shows its port and process id.
    browser.goto(&stack.app("/#/models")).await;
    // The registry's monitor looks at each process every 5 s; the page refreshes every 3 s.
    let molprop_line = |table: &str| {
        table
            .lines()
            .find(|l| l.contains("runtime-host/molprop"))
            .map(str::to_owned)
    };
    let table = browser
        .wait_text("#registrations table", |t| {
            molprop_line(t).is_some_and(|l| l.split_whitespace().any(|w| w == "alive"))
        })
        .await;
    let molprop_row = molprop_line(&table).unwrap();
    let cells: Vec<&str> = molprop_row.split_whitespace().collect();
    assert!(
        cells.contains(&port.to_string().as_str()),
        "port {port}: {molprop_row}"
    );
    assert!(
        cells.contains(&stack.pid().to_string().as_str()),
        "process: {molprop_row}"
    );
    assert!(cells.contains(&"alive"), "{molprop_row}");
    // Its own version (a digest of its files), not the specification's.
    let deployed = stack.deployment("molprop").await.expect("molprop listed");
    let version = deployed["version"].as_str().unwrap();
    assert!(
        version.starts_with("sha256:") && cells.contains(&version),
        "version {version}: {molprop_row}"
    );
    served_models(browser, stack, c).await;
}

/// The models served (with their traffic) and one model's tables, as on any host.
pub(crate) async fn served_models(browser: &Browser, stack: &impl App, c: &Client) {
    browser.goto(&stack.app("/#/models")).await;
    browser
        .wait_text("#served-models", |t| {
            t.contains("molprop") && t.contains("Requests")
        })
        .await;
    browser.screenshot("models").await;

    // One model: capabilities and acceptable ranges as tables.
    browser.goto(&stack.app("/#/models/molprop")).await;
    let ranges: Value = c
        .get(&stack.app("/models/molprop/acceptable_ranges"))
        .await
        .value();
    let first_property = ranges["property_ranges"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    browser
        .wait_text("table.ranges", |t| t.contains(&first_property))
        .await;
    assert!(browser.text("main").await.contains("Capabilities"));
    browser.screenshot("model-molprop").await;
}

/// Whether the models page shows the Deployments section, once it has asked the host for
/// its admin API: `(host has the API, section hidden)`.
pub(crate) async fn deployments_section_shown(browser: &Browser, stack: &impl App) -> (bool, bool) {
    browser.goto(&stack.app("/#/models")).await;
    let settled = browser
        .eval(
            "return new Promise((done) => { const look = () => { \
             const s = document.querySelector('#deployments-section'); \
             if (s && s.dataset.adminApi) done([s.dataset.adminApi === 'yes', s.hidden]); \
             else setTimeout(look, 50); }; look(); });",
        )
        .await;
    (settled[0] == true, settled[1] == true)
}

/// Test examples, the free form, a model's failure, a classifier, the keyboard.
pub(crate) async fn try_it(browser: &Browser, stack: &impl App, c: &Client) {
    // Try it: the first test example, run from its button, shows the model's own answer.
    browser.goto(&stack.app("/#/try/molprop")).await;
    browser.wait_text("ul.examples", |t| !t.is_empty()).await;
    browser.click("button.example").await;
    let shown = browser
        .wait_text("#result-area", |t| {
            t.contains("Prediction") || t.contains("could not")
        })
        .await;
    let examples = c
        .get(&stack.app("/models/molprop/test_examples"))
        .await
        .value();
    let first = &examples["examples"][0];
    let smiles = first["smiles"].as_str().or(first["text"].as_str()).unwrap();
    let answer = c
        .post_json(
            &stack.app("/models/molprop/predict"),
            &json!({"input_type": "text", "data": {"smiles": smiles}}),
            None,
        )
        .await
        .value();
    assert!(
        shown.contains(&format!("Result: {}", first["name"].as_str().unwrap())),
        "{shown}"
    );
    assert!(shown.contains(smiles), "the input is shown: {shown}");
    let logp = answer["results"]["prediction"]["logp"]
        .as_f64()
        .expect("molprop predicts logp");
    let logp_shown = format!("{}", (logp * 10_000.0).round() / 10_000.0);
    assert!(
        shown.contains(&logp_shown),
        "logP {logp_shown} shown: {shown}"
    );
    assert!(shown.contains("Raw JSON"), "{shown}");
    // The example's molecule is drawn: in the list, under the input and beside the answer.
    let drawn = browser
        .eval(
            "const imgs = [...document.querySelectorAll('#result-area img.structure, \
             .smiles-preview img.structure, ul.examples img.structure')]; \
             return Promise.all(imgs.map((i) => i.decode().then(() => true, () => false))) \
             .then((ok) => imgs.map((i, n) => ({ where: i.closest('#result-area') ? 'answer' \
             : i.closest('.smiles-preview') ? 'input' : 'example', alt: i.alt, \
             loaded: ok[n], width: i.naturalWidth, shown: i.getBoundingClientRect().width })));",
        )
        .await;
    let drawn = drawn.as_array().expect("a list");
    for place in ["answer", "input", "example"] {
        let found = drawn.iter().find(|d| d["where"] == place);
        let d = found.unwrap_or_else(|| panic!("no structure in the {place}: {drawn:?}"));
        assert_eq!(d["loaded"], true, "{d}");
        assert!(
            d["width"].as_f64().unwrap() > 50.0 && d["shown"].as_f64().unwrap() > 50.0,
            "sized: {d}"
        );
    }
    // The examples' molecules at one bond length: every one at the same scale of its own
    // drawing (shrunk only if it did not fit its box; none of molprop's needs that).
    let scales = browser
        .eval(
            "return [...document.querySelectorAll('ul.examples img.structure')] \
             .map((i) => i.getBoundingClientRect().width / i.naturalWidth);",
        )
        .await;
    let scales: Vec<f64> = scales
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_f64())
        .collect();
    assert!(scales.len() >= 3, "{scales:?}");
    let (lo, hi) = scales
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
    assert!(
        hi - lo < 0.02,
        "one bond length for every example: {scales:?}"
    );
    let answer = drawn.iter().find(|d| d["where"] == "answer").unwrap();
    assert_eq!(answer["alt"], format!("Structure of {smiles}"));
    browser.screenshot("try-molprop").await;

    // The free form: a SMILES the model cannot read shows the model's own error message.
    let broken = "C1CC(";
    let refused = c
        .post_json(
            &stack.app("/models/molprop/predict"),
            &json!({"input_type": "text", "data": {"text": broken}}),
            None,
        )
        .await
        .value();
    assert_eq!(refused["success"], false, "{refused}");
    let message = refused["error_message"].as_str().unwrap().to_owned();
    browser.type_into("#field-text", broken).await;
    // As it is typed, the parser's message appears under the input, pointing at the place.
    let depicted = c.get(&stack.app("/depict.svg?smiles=C1CC%28")).await;
    let position: usize = depicted
        .header("smiles-error-position")
        .unwrap()
        .parse()
        .unwrap();
    let depicted = depicted.value();
    let at = browser
        .wait_text(".smiles-error", |t| t.contains("invalid SMILES"))
        .await;
    assert!(at.contains(depicted["error"].as_str().unwrap()), "{at}");
    let caret = browser.text(".smiles-caret").await;
    let lines: Vec<&str> = caret.lines().collect();
    assert_eq!(lines.first().copied(), Some(broken), "{caret}");
    assert_eq!(
        lines.get(1).map(|l| l.len()),
        Some(position),
        "caret under {position}: {caret}"
    );
    assert_eq!(
        browser
            .eval("return document.querySelector('#field-text').getAttribute('aria-invalid')")
            .await,
        "true"
    );
    browser.screenshot("try-invalid-smiles").await;
    browser.click("#predict-form button[type=submit]").await;
    let shown = browser
        .wait_text("#result-area", |t| t.contains("Result: your request"))
        .await;
    assert!(
        shown.contains("could not predict") && shown.contains(&message),
        "{shown}"
    );
    // No drawing beside a refused SMILES (before: a broken-image icon).
    let images = browser
        .eval("return document.querySelectorAll('#result-area img').length;")
        .await;
    assert_eq!(
        images,
        json!(0),
        "no image for a SMILES that cannot be read"
    );

    // A classifier: its probabilities and the applicability-domain flag.
    browser.goto(&stack.app("/#/try/iris")).await;
    browser.wait_text("ul.examples", |t| !t.is_empty()).await;
    browser.click("button.example").await;
    let shown = browser
        .wait_text("#result-area", |t| t.contains("Probabilities"))
        .await;
    assert!(shown.contains("applicability domain"), "{shown}");
    // The applicability domain's details as named fields, not raw JSON.
    let other = browser.text("#result-area table:last-of-type").await;
    let fields = browser
        .eval("return document.querySelectorAll('#result-area dl.field-facts').length;")
        .await;
    assert!(
        fields.as_u64().unwrap() >= 1,
        "applicability_domain as fields: {other}"
    );
    assert!(!other.contains("{\""), "no raw JSON in the fields: {other}");
    browser.screenshot("try-iris").await;
    iris_form(browser).await;

    // Keyboard: an example runs from Enter on its focused button.
    browser.goto(&stack.app("/#/try/molprop")).await;
    browser.wait_text("ul.examples", |t| !t.is_empty()).await;
    let second = browser
        .client
        .find(fantoccini::Locator::Css(
            "ul.examples li:nth-child(2) button",
        ))
        .await
        .unwrap();
    let name = second.text().await.unwrap();
    second
        .send_keys(&char::from(fantoccini::key::Key::Enter).to_string())
        .await
        .unwrap();
    browser
        .wait_text("#result-area", |t| t.contains(&format!("Result: {name}")))
        .await;
}

/// The tabular model's own request is a form (issue 62): one number field per feature in
/// model.toml's order, each with its acceptable range as a hint, filled by an example and
/// sent as the model's `features`; no JSON box, no `"<number>"` placeholder.
async fn iris_form(browser: &Browser) {
    let fields = browser
        .eval(
            "return [...document.querySelectorAll('#predict-form fieldset.features input')] \
             .map((i) => ({name: i.name, type: i.type, value: i.value, hint: \
             (document.getElementById(i.getAttribute('aria-describedby')) || {}).textContent}));",
        )
        .await;
    let fields = fields.as_array().expect("a list").clone();
    let names: Vec<&str> = fields.iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "sepal_length_cm",
            "sepal_width_cm",
            "petal_length_cm",
            "petal_width_cm"
        ],
        "{fields:?}"
    );
    for f in &fields {
        assert_eq!(f["type"], "number", "{f}");
        let hint = f["hint"].as_str().unwrap_or_default();
        assert!(hint.contains(" to ") && hint.contains("cm"), "{f}");
        // The example clicked above filled it.
        assert!(f["value"].as_str().unwrap().parse::<f64>().is_ok(), "{f}");
    }
    let form = browser.text("#predict-form").await;
    assert!(!form.contains("<number"), "{form}");
    let boxes = browser
        .eval("return document.querySelectorAll('#predict-form textarea').length;")
        .await;
    assert_eq!(boxes, 0, "no JSON box");
    // A flower of our own, measured by hand: a setosa's small petals.
    for (name, value) in [
        ("sepal_length_cm", "5.0"),
        ("sepal_width_cm", "3.4"),
        ("petal_length_cm", "1.5"),
        ("petal_width_cm", "0.2"),
    ] {
        browser.type_into(&format!("#feature-{name}"), value).await;
    }
    browser.click("#predict-form button[type=submit]").await;
    let shown = browser
        .wait_text("#result-area", |t| t.contains("Result: your request"))
        .await;
    assert!(shown.contains("setosa"), "{shown}");
    // The input echoed in the same order.
    let echoed = browser.text("#result-area .input").await;
    let at = |name: &str| {
        echoed
            .find(name)
            .unwrap_or_else(|| panic!("{name}: {echoed}"))
    };
    assert!(
        at("sepal length") < at("sepal width")
            && at("sepal width") < at("petal length")
            && at("petal length") < at("petal width"),
        "{echoed}"
    );
}
