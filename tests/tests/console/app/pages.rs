//! The models pages, a model's try-it form and the batch page, in the browser.

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

/// The batch page: a .smi file uploaded, scored through molprop with bad rows failing alone,
/// the in-domain share, a histogram, a sortable table and the CSV download, each checked
/// against the same library sent to the model directly.
pub(crate) async fn batch_page(browser: &Browser, stack: &impl App, c: &Client) {
    let text = std::fs::read_to_string(
        e2e_tests::workspace_root().join("crates/chem/tests/data/rdkit-samples.tsv"),
    )
    .unwrap();
    let mut smiles: Vec<String> = text
        .lines()
        .skip(1)
        .take(40)
        .map(|l| l.split('\t').next().unwrap().to_owned())
        .collect();
    smiles.insert(5, "C1CC(".into());
    smiles.push("XX".into());
    let dir = e2e_tests::temp_dir();
    let file = dir.path().join("library.smi");
    let library: String = smiles
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{s} m{i}\n"))
        .collect();
    std::fs::write(&file, &library).unwrap();
    // What the model says of the same library, sent directly.
    let direct = c
        .post_json(
            &stack.app("/models/molprop/predict"),
            &json!({"input_type": "text", "data": {"texts": smiles, "property": "logp"}}),
            None,
        )
        .await
        .value();
    let items = direct["results"]["items"].as_array().unwrap().clone();
    let good: Vec<&Value> = items.iter().filter(|i| i["success"] == true).collect();
    let inside = good
        .iter()
        .filter(|i| i["results"]["in_reliable_range"] == true)
        .count();
    let lowest = good
        .iter()
        .map(|i| i["results"]["prediction"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);

    browser.goto(&stack.app("/#/batch")).await;
    browser
        .wait_text("#batch-model", |t| t.contains("molprop"))
        .await;
    // Idle: a molecule model is chosen, the box asks for SMILES, and Stop cannot be pressed
    // (before: iris, a tabular model, under a box asking for SMILES).
    let idle = browser
        .eval(
            "return [document.getElementById('batch-model').value, \
             document.getElementById('batch-text').placeholder, \
             document.getElementById('batch-stop').disabled];",
        )
        .await;
    assert_eq!(idle[0], "molprop", "{idle}");
    assert!(idle[1].as_str().unwrap().contains("SMILES"), "{idle}");
    assert_eq!(idle[2], true, "{idle}");
    browser
        .eval(
            "const m = document.getElementById('batch-model'); m.value = 'iris'; \
             m.dispatchEvent(new Event('change')); \
             return document.getElementById('batch-text').placeholder;",
        )
        .await
        .as_str()
        .filter(|p| p.contains("features"))
        .expect("a tabular model's box asks for its features");
    browser
        .eval("document.getElementById('batch-model').value = 'molprop'; return true;")
        .await;
    let upload = browser
        .client
        .find(fantoccini::Locator::Css("#batch-file"))
        .await
        .unwrap();
    upload.send_keys(file.to_str().unwrap()).await.unwrap();
    // The file's text appears in the paste box, where it can still be edited.
    for _ in 0..100 {
        let pasted = browser
            .eval("return document.getElementById('batch-text').value;")
            .await;
        if pasted.as_str() == Some(library.as_str()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    browser.type_into("#batch-data", "property=logp").await;
    browser.click("#batch-form button[type=submit]").await;
    // Done, or the error box of a run that failed (its status is emptied).
    browser
        .wait_text("#main", |t| {
            t.contains("Done:") || t.contains("Could not score")
        })
        .await;
    let status = browser.text("#batch-status").await;
    assert!(
        status.contains("42 of 42 rows through molprop, 2 failed"),
        "{status}: {}",
        browser.text("#batch-results").await
    );
    let share = format!("in domain ({inside} of {})", good.len());
    assert!(status.contains(&share), "{status} lacks {share}");
    // The histogram plots every numeric prediction.
    let label = browser
        .eval("return document.querySelector('svg.histogram').getAttribute('aria-label');")
        .await;
    assert!(
        label
            .as_str()
            .unwrap()
            .starts_with("Histogram of 40 predictions"),
        "{label}"
    );
    let bars = browser
        .eval("return document.querySelectorAll('svg.histogram rect').length;")
        .await;
    assert!(bars.as_u64().unwrap() >= 2, "{bars}");
    // The table: every row, the bad ones marked; sorting by prediction puts the lowest first.
    let table = browser.text("#batch-table").await;
    assert!(table.contains("First 42 of 42 rows"), "{table}");
    let failed = browser
        .eval("return document.querySelectorAll('#batch-table tr.failed').length;")
        .await;
    assert_eq!(failed, json!(2));
    // Each row that scored shows its molecule; the failed ones show none.
    let drawn = browser
        .eval(
            "return [document.querySelectorAll('#batch-table tbody tr:not(.failed) img.structure').length, \
             document.querySelectorAll('#batch-table tr.failed img.structure').length]",
        )
        .await;
    assert_eq!(drawn, json!([40, 0]), "structures in the batch table");
    browser.click("button.sort[data-column=prediction]").await;
    let first = browser
        .eval("return document.querySelector('#batch-table tbody tr td.num').textContent;")
        .await;
    let first: f64 = first.as_str().unwrap().parse().unwrap();
    assert!((first - lowest).abs() < 1e-3, "{first} vs {lowest}");
    // The download holds every row in input order.
    let csv = browser
        .eval(
            "const a = document.getElementById('batch-download'); \
             return decodeURIComponent(a.href.slice(a.href.indexOf(',') + 1));",
        )
        .await;
    let lines: Vec<&str> = csv.as_str().unwrap().lines().collect();
    assert_eq!(lines.len(), 43, "{csv}");
    assert_eq!(lines[0], "id,input,prediction,in_domain,error");
    assert!(lines[6].starts_with("m5,C1CC(,,,"), "{}", lines[6]);
    browser.screenshot("batch").await;
}
