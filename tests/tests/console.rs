//! The web console and the app port of `runtime-host up`: every service on one origin,
//! routed as `spin.toml` routes them, and the console page driven in a real headless
//! Chromium (skipped, loudly, where Chromium is not installed).

use e2e_tests::browser::Browser;
use e2e_tests::{Client, Stack};
use hyper::Method;
use serde_json::{Value, json};
use std::collections::BTreeSet;

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
        BTreeSet::from(["iris", "minilm", "molprop", "solubility"])
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
/// dialog; a wrong admin token shows the chat service's 403 message, the right one appends.
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
    long_lists(&browser, &stack, &c).await;
    accessibility(&browser, &stack).await;
    browser.close().await;
}

/// Registrations with port, process and liveness; one model's tables.
async fn models_pages(browser: &Browser, stack: &Stack, c: &Client) {
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
async fn try_it(browser: &Browser, stack: &Stack, c: &Client) {
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

    // A classifier: its probabilities and the applicability-domain flag.
    browser.goto(&stack.app("/#/try/iris")).await;
    browser.wait_text("ul.examples", |t| !t.is_empty()).await;
    browser.click("button.example").await;
    let shown = browser
        .wait_text("#result-area", |t| t.contains("Probabilities"))
        .await;
    assert!(shown.contains("applicability domain"), "{shown}");
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
async fn batch_page(browser: &Browser, stack: &Stack, c: &Client) {
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

/// The chat list, a dialog, a refused and an accepted append, a service's error.
async fn chats(browser: &Browser, stack: &Stack, c: &Client) {
    // Chats: the list, then the sample dialog's messages by role.
    browser.goto(&stack.app("/#/chats")).await;
    browser
        .wait_text("table.chats", |t| t.contains("Welcome to the chat service"))
        .await;
    browser.screenshot("chats").await;
    browser.click("table.chats a[href='#/chats/welcome']").await;
    let dialog: Value = c.get(&stack.app("/api/dialog?id=welcome")).await.value();
    let messages = browser
        .wait_text("#messages", |t| {
            t.contains("What can I do with this service?")
        })
        .await;
    for m in dialog["messages"].as_array().unwrap() {
        assert!(
            messages.contains(m["content"].as_str().unwrap()),
            "{messages}"
        );
    }
    let shown = browser
        .eval("return document.querySelectorAll('#messages li').length")
        .await;
    assert_eq!(shown, json!(dialog["messages"].as_array().unwrap().len()));

    // A wrong admin token: the chat service's 403 message, as it wrote it.
    let refused = c
        .post_json(
            &stack.chat("/api/dialog/messages?id=welcome"),
            &json!({"role": "user", "content": "x"}),
            Some("wrong-token"),
        )
        .await;
    let refusal = refused.assert_error(403, "forbidden");
    browser.type_into("#admin-token", "wrong-token").await;
    browser
        .type_into("#message-content", "Hello from the browser")
        .await;
    browser.click("#append-form button[type=submit]").await;
    let status = browser
        .wait_text("#append-status", |t| t.contains("Could not append"))
        .await;
    assert!(
        status.contains(&refusal.error),
        "{status} / {}",
        refusal.error
    );
    browser.screenshot("dialog-wrong-token").await;

    // The right token appends, and the message is stored.
    browser.type_into("#admin-token", &stack.admin_token).await;
    browser.click("#append-form button[type=submit]").await;
    browser
        .wait_text("#append-status", |t| t.contains("Appended"))
        .await;
    browser
        .wait_text("#messages", |t| t.contains("Hello from the browser"))
        .await;
    let stored: Value = c.get(&stack.app("/api/dialog?id=welcome")).await.value();
    let last = stored["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"], "Hello from the browser");
    assert_eq!(last["role"], "user");
    browser.screenshot("dialog").await;

    // An error from a service is its message on the page, never a blank one.
    browser.goto(&stack.app("/#/chats/no-such-dialog")).await;
    let missing = c.get(&stack.app("/api/dialog?id=no-such-dialog")).await;
    let missing = missing.assert_error(404, "not_found");
    let shown = browser.wait_text("main .error", |t| !t.is_empty()).await;
    assert!(shown.contains(&missing.error), "{shown}");
}

/// Many chats and a long dialog stay usable: a page at a time.
async fn long_lists(browser: &Browser, stack: &Stack, c: &Client) {
    // Many chats and a long dialog: a page at a time, "show more" for the rest.
    let long: Vec<Value> = (0..250)
        .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("message number {i}")}))
        .collect();
    let created = c
        .post_json(
            &stack.chat("/api/chats"),
            &json!({"id": "long", "chatName": "A long dialog", "messages": long}),
            Some(&stack.admin_token),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.text());
    for i in 0..60 {
        let r = c
            .post_json(
                &stack.chat("/api/chats"),
                &json!({"chatName": format!("Chat {i}"), "messages": []}),
                Some(&stack.admin_token),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text());
    }
    let total = c
        .get(&stack.chat("/api/chats"))
        .await
        .value()
        .as_array()
        .unwrap()
        .len();
    let rows = "return document.querySelectorAll('table.chats tbody tr').length";
    browser.goto(&stack.app("/#/chats")).await;
    browser
        .wait_text(".pager", |t| {
            t.contains(&format!("Showing 50 of {total} chats"))
        })
        .await;
    assert_eq!(browser.eval(rows).await, json!(50));
    browser.click(".pager button.more").await;
    browser
        .wait_text(".pager", |t| {
            t.contains(&format!("Showing {total} of {total} chats"))
        })
        .await;
    assert_eq!(browser.eval(rows).await, json!(total));
    let more_hidden = "return document.querySelector('.pager button.more').hidden";
    assert_eq!(browser.eval(more_hidden).await, json!(true));
    browser.type_into("#chat-filter", "long dialog").await;
    browser
        .wait_text("table.chats", |t| t.contains("A long dialog"))
        .await;
    assert_eq!(browser.eval(rows).await, json!(1));
    browser.goto(&stack.app("/#/chats/long")).await;
    browser
        .wait_text(".pager", |t| t.contains("Showing 100 of 250 messages"))
        .await;
    browser.click(".pager button.more").await;
    browser
        .wait_text(".pager", |t| t.contains("Showing 200 of 250 messages"))
        .await;
    let last_shown =
        "return document.querySelector('#messages li:last-child .content').textContent";
    assert_eq!(browser.eval(last_shown).await, json!("message number 199"));
}

/// Contrast, labels, focus, a phone-width screen.
async fn accessibility(browser: &Browser, stack: &Stack) {
    // Contrast: every visible text on each page at WCAG AA or better.
    for page in [
        "/#/models",
        "/#/models/molprop",
        "/#/try/molprop",
        "/#/chats/welcome",
    ] {
        browser.goto(&stack.app(page)).await;
        browser.wait_text("main h1", |t| !t.is_empty()).await;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        assert_eq!(browser.low_contrast_texts().await, json!([]), "{page}");
    }
    // The check itself: grey #999 on white (2.8:1) is caught.
    browser
        .eval("const p = document.createElement('p'); p.style.color = '#999'; p.textContent = 'pale'; document.querySelector('main').append(p); return null")
        .await;
    let caught = browser.low_contrast_texts().await;
    assert!(caught.to_string().contains("pale"), "{caught}");

    // Every form control has a label; navigation moves the focus to the new page's heading.
    browser.goto(&stack.app("/#/try/molprop")).await;
    browser.wait_text("#predict-form", |t| !t.is_empty()).await;
    let unlabelled = browser
        .eval(
            "return [...document.querySelectorAll('input, select, textarea')]
               .filter((e) => !e.labels || e.labels.length === 0).map((e) => e.id)",
        )
        .await;
    assert_eq!(unlabelled, json!([]), "controls without a label");
    browser.click("nav a[data-section='chats']").await;
    browser.wait_text("main h1", |t| t == "Chats").await;
    let focused = browser
        .eval("return document.activeElement.textContent")
        .await;
    assert_eq!(focused, json!("Chats"));

    // The models page once the models have served requests (the README's picture).
    browser.goto(&stack.app("/#/models")).await;
    browser
        .wait_text("#served-models", |t| {
            t.contains("molprop") && t.contains("Requests")
        })
        .await;
    browser.screenshot("models-in-use").await;

    // A phone-width screen: nothing wider than the screen but the tables' own scroll boxes.
    browser
        .client
        .set_window_size(390, 844)
        .await
        .expect("resizing");
    browser.goto(&stack.app("/#/models")).await;
    browser
        .wait_text("#registrations table", |t| {
            t.contains("runtime-host/molprop")
        })
        .await;
    let overflow = browser
        .eval("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        .await;
    assert_eq!(
        overflow,
        json!(0),
        "the page scrolls sideways at phone width"
    );
    browser.screenshot("models-phone").await;
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
