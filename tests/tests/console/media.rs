//! The Try-it form of an image model (models/digits) and an audio model
//! (models/spoken-digits) in headless Chromium against a real `up` (issue 58 §4): an example
//! run from its button, a file through the file input, a file dropped on the drop zone, a
//! file the model cannot read, and a URL the model may not fetch; each answer (or error)
//! compared with what the model says to the same request sent directly, and what was sent
//! shown beside it (the picture, or a player for the sound).

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn the_try_it_form_takes_pictures_and_sounds_in_a_real_browser() {
    let Some(browser) = Browser::start("the_try_it_form_takes_media", 1280, 1000).await else {
        return;
    };
    let models = e2e_tests::temp_dir();
    for name in ["digits", "spoken-digits"] {
        e2e_tests::copy_model(&e2e_tests::model_dir(name), &models.path().join(name));
    }
    let stack = Stack::up(&["--models", models.path().to_str().unwrap()], 4);
    let c = Client::new();
    let files = e2e_tests::temp_dir();
    pictures(&browser, &stack, &c, files.path()).await;
    sounds(&browser, &stack, &c, files.path()).await;
    browser.close().await;
}

/// What the model answers to `data` sent directly, as the form would send it.
async fn direct(c: &Client, stack: &impl App, model: &str, kind: &str, data: Value) -> Value {
    let request = json!({"input_type": kind, "data": data});
    c.post_json(
        &stack.app(&format!("/models/{model}/predict")),
        &request,
        None,
    )
    .await
    .value()
}

/// The model's test examples holding a base64 file of `kind` (`image` or `audio`).
async fn examples(c: &Client, stack: &impl App, model: &str, kind: &str) -> Vec<Value> {
    let all = c
        .get(&stack.app(&format!("/models/{model}/test_examples")))
        .await
        .value();
    let with_file: Vec<Value> = all["examples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e[kind].is_string())
        .cloned()
        .collect();
    assert!(
        with_file.len() >= 3,
        "{model}: three examples or more: {all}"
    );
    with_file
}

/// `base64` decoded by the browser's own `atob` and written to `dir/name`.
async fn write_file(browser: &Browser, base64: &str, dir: &std::path::Path, name: &str) -> String {
    let bytes = browser
        .eval(&format!(
            "return Array.from(atob({base64:?}), (ch) => ch.charCodeAt(0));"
        ))
        .await;
    let bytes: Vec<u8> = serde_json::from_value(bytes).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Waits for the answer to the input `label` (a result or an error) and returns its text.
async fn answer_to(browser: &Browser, label: &str) -> String {
    let heading = format!("Result: {label}");
    browser
        .wait_text("#result-area", |t| {
            t.contains(&heading) && !t.contains("Running")
        })
        .await
}

/// The page shows the model's answer `expected`: its prediction, one probability per label,
/// and the applicability-domain flag.
async fn assert_shows(browser: &Browser, shown: &str, expected: &Value) {
    assert_eq!(expected["success"], true, "{expected}");
    let r = &expected["results"];
    let prediction = r["prediction"].as_str().unwrap();
    let table = browser.text("#result-area table.prediction").await;
    assert!(
        table.contains(prediction),
        "{prediction} in {table}: {shown}"
    );
    let rows = browser
        .eval(
            "return [...document.querySelectorAll('#result-area table')] \
             .filter((t) => t.caption && t.caption.textContent === 'Probabilities') \
             .map((t) => t.tBodies[0].rows.length);",
        )
        .await;
    let labels = r["probabilities"].as_object().unwrap().len();
    assert_eq!(rows, json!([labels]), "one row per label: {shown}");
    let flag = if r["in_domain"] == true {
        "in applicability domain"
    } else {
        "outside applicability domain"
    };
    assert!(shown.contains(flag), "{flag}: {shown}");
}

/// The `src` of what was sent, as shown beside the answer (`img` or `audio`).
async fn shown_source(browser: &Browser, element: &str) -> String {
    let src = browser
        .eval(&format!(
            "const e = document.querySelector('#media-shown {element}.media-sent'); \
             return e ? e.getAttribute('src') : null;"
        ))
        .await;
    src.as_str()
        .unwrap_or_else(|| panic!("no {element} beside the answer"))
        .to_owned()
}

/// Drops a file of `base64` named `name` on the drop zone, as a user's drag would: a
/// synthetic dragenter (the zone lights up) and drop, carrying a DataTransfer built here.
async fn drop_file(browser: &Browser, base64: &str, name: &str, mime: &str) -> Value {
    browser
        .eval(&format!(
            "const bytes = Uint8Array.from(atob({base64:?}), (ch) => ch.charCodeAt(0)); \
             const data = new DataTransfer(); \
             data.items.add(new File([bytes], {name:?}, {{ type: {mime:?} }})); \
             const zone = document.getElementById('media-drop'); \
             const event = (type) => new DragEvent(type, \
               {{ dataTransfer: data, bubbles: true, cancelable: true }}); \
             zone.dispatchEvent(event('dragenter')); \
             const lit = zone.classList.contains('over'); \
             const taken = !zone.dispatchEvent(event('drop')); \
             return {{ lit, taken, after: zone.classList.contains('over') }};"
        ))
        .await
}

/// digits: the form takes pictures; an example, an uploaded and a dropped PNG answer as the
/// model does directly, shown scaled up with sharp pixels; a text file and a loopback URL
/// show the model's own error and error code.
async fn pictures(browser: &Browser, stack: &impl App, c: &Client, dir: &std::path::Path) {
    let examples = examples(c, stack, "digits", "image").await;
    browser.goto(&stack.app("/#/try/digits")).await;
    browser.wait_text("ul.examples", |t| !t.is_empty()).await;
    let form = browser
        .eval(
            "return [document.getElementById('media-file')?.accept, \
             !!document.getElementById('media-drop'), !!document.getElementById('media-url'), \
             !!document.getElementById('predict-form'), \
             document.querySelectorAll('ul.examples img.media-thumb').length];",
        )
        .await;
    assert_eq!(form, json!(["image/*", true, true, false, examples.len()]));

    // An example, from its button.
    let first = &examples[0];
    let name = first["name"].as_str().unwrap();
    browser.click("button.example").await;
    let shown = answer_to(browser, name).await;
    let image = first["image"].as_str().unwrap();
    let expected = direct(c, stack, "digits", "image", json!({"image": image})).await;
    assert_shows(browser, &shown, &expected).await;
    let src = shown_source(browser, "img").await;
    assert!(
        src.starts_with("data:image/png;base64,") && src.ends_with(image),
        "the example's own file: {}",
        &src[..src.len().min(60)]
    );
    // An 8x8 picture is shown scaled up by a whole factor, pixels kept sharp.
    let look = browser
        .eval(
            "const i = document.querySelector('#media-shown img'); \
             return i.decode().then(() => [i.naturalWidth, i.clientWidth, \
             getComputedStyle(i).imageRendering]);",
        )
        .await;
    let (natural, width) = (look[0].as_f64().unwrap(), look[1].as_f64().unwrap());
    assert!(natural > 0.0 && width >= 150.0, "scaled up: {look}");
    assert_eq!((width / natural).fract(), 0.0, "a whole factor: {look}");
    assert_eq!(look[2], "pixelated", "{look}");
    browser.screenshot("try-digits").await;

    // A file through the file input: read as base64 by the page, the same answer.
    let upload = examples[1]["image"].as_str().unwrap();
    let path = write_file(browser, upload, dir, "my-digit.png").await;
    let picker = browser
        .client
        .find(fantoccini::Locator::Css("#media-file"))
        .await
        .unwrap();
    picker.send_keys(&path).await.unwrap();
    let shown = answer_to(browser, "my-digit.png").await;
    let expected = direct(c, stack, "digits", "image", json!({"image": upload})).await;
    assert_shows(browser, &shown, &expected).await;
    assert_eq!(
        shown_source(browser, "img").await,
        format!("data:image/png;base64,{upload}")
    );
    let status = browser.text("#media-status").await;
    assert!(status.contains("Sent my-digit.png"), "{status}");

    // A file dropped on the zone.
    let dropped = examples[2]["image"].as_str().unwrap();
    let drop = drop_file(browser, dropped, "dropped.png", "image/png").await;
    assert_eq!(drop, json!({"lit": true, "taken": true, "after": false}));
    let shown = answer_to(browser, "dropped.png").await;
    let expected = direct(c, stack, "digits", "image", json!({"image": dropped})).await;
    assert_shows(browser, &shown, &expected).await;
    assert!(shown_source(browser, "img").await.ends_with(dropped));

    // A file that is no picture: the model's 400, its message and error code shown, and a
    // line instead of a broken picture.
    let text = "bm90IGEgcGljdHVyZQ=="; // "not a picture"
    drop_file(browser, text, "notes.txt", "text/plain").await;
    let refused = c
        .post_json(
            &stack.app("/models/digits/predict"),
            &json!({"input_type": "image", "data": {"image": text}}),
            None,
        )
        .await
        .assert_error(400, "unsupported_media");
    let shown = answer_to(browser, "notes.txt").await;
    assert!(
        shown.contains("notes.txt failed")
            && shown.contains(&refused.error)
            && shown.contains("(unsupported_media, HTTP 400)"),
        "{shown}"
    );
    browser
        .wait_text("#media-shown", |t| t.contains("cannot show the picture"))
        .await;
    browser.screenshot("try-digits-unsupported").await;

    // A URL the model may not fetch: this very app, on loopback. The browser shows the
    // picture there (the console's icon); the model refuses to fetch it.
    let url = stack.app("/assets/favicon.svg");
    browser.type_into("#media-url", &url).await;
    browser.click("#media-url-form button[type=submit]").await;
    let refused = c
        .post_json(
            &stack.app("/models/digits/predict"),
            &json!({"input_type": "image", "data": {"image_url": url}}),
            None,
        )
        .await
        .assert_error(400, "url_not_allowed");
    let shown = answer_to(browser, &url).await;
    assert!(
        shown.contains(&refused.error) && shown.contains("(url_not_allowed, HTTP 400)"),
        "{shown}"
    );
    assert_eq!(shown_source(browser, "img").await, url);
    let loaded = browser
        .eval("return document.querySelector('#media-shown img').decode().then(() => true, () => false);")
        .await;
    assert_eq!(loaded, true, "the browser shows what the URL holds");
    browser.screenshot("try-digits-url-refused").await;
    // No URL: the form says so, and sends nothing.
    browser.type_into("#media-url", " ").await;
    browser.click("#media-url-form button[type=submit]").await;
    browser
        .wait_text("#media-status", |t| {
            t.contains("Enter the URL of a picture")
        })
        .await;
}

/// spoken-digits: the form takes sounds; an example and an uploaded WAV answer as the model
/// does directly, each beside a player holding the very file sent.
async fn sounds(browser: &Browser, stack: &impl App, c: &Client, dir: &std::path::Path) {
    let examples = examples(c, stack, "spoken-digits", "audio").await;
    browser.goto(&stack.app("/#/try/spoken-digits")).await;
    browser.wait_text("ul.examples", |t| !t.is_empty()).await;
    let accept = browser
        .eval("return document.getElementById('media-file').accept;")
        .await;
    assert_eq!(accept, "audio/*");

    let first = &examples[0];
    browser.click("button.example").await;
    let shown = answer_to(browser, first["name"].as_str().unwrap()).await;
    let sound = first["audio"].as_str().unwrap();
    let expected = direct(c, stack, "spoken-digits", "audio", json!({"audio": sound})).await;
    assert_shows(browser, &shown, &expected).await;
    assert_eq!(
        shown_source(browser, "audio").await,
        format!("data:audio/wav;base64,{sound}")
    );
    // The player has the sound: Chromium decoded its header, and it lasts as long as the
    // model says it did.
    let player = browser
        .eval(
            "const a = document.querySelector('#media-shown audio'); \
             return new Promise((done) => { \
               const report = () => done([a.controls, a.readyState, a.duration]); \
               if (a.readyState >= 1) report(); \
               else { a.addEventListener('loadedmetadata', report); \
                 a.addEventListener('error', report); } });",
        )
        .await;
    assert_eq!(player[0], true, "{player}");
    assert!(
        player[1].as_u64().unwrap() >= 1,
        "metadata loaded: {player}"
    );
    let duration = player[2].as_f64().unwrap();
    assert!(duration > 0.05 && duration < 60.0, "{player}");
    browser.screenshot("try-spoken-digits").await;

    // A WAV through the file input.
    let upload = examples[1]["audio"].as_str().unwrap();
    let path = write_file(browser, upload, dir, "my-word.wav").await;
    let picker = browser
        .client
        .find(fantoccini::Locator::Css("#media-file"))
        .await
        .unwrap();
    picker.send_keys(&path).await.unwrap();
    let shown = answer_to(browser, "my-word.wav").await;
    let expected = direct(c, stack, "spoken-digits", "audio", json!({"audio": upload})).await;
    assert_shows(browser, &shown, &expected).await;
    assert_eq!(
        shown_source(browser, "audio").await,
        format!("data:audio/wav;base64,{upload}")
    );
}
