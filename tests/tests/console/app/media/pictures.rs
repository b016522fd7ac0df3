//! The image model's Try-it form: examples, files picked and dropped, URLs.

use super::*;

/// digits: the form takes pictures; an example, an uploaded and a dropped PNG answer as the
/// model does directly, shown scaled up with sharp pixels; an example by URL (with `server`)
/// is listed as its address and loads nothing until run; a text file and a loopback URL
/// show the model's own error and error code; a URL on `server` (where the model may fetch)
/// answers as the model does to it directly.
pub(super) async fn pictures(
    browser: &Browser,
    stack: &impl App,
    c: &Client,
    server: Option<&FileServer>,
) {
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
    // Thumbnails for the inline examples only; a URL example (where the model may fetch
    // one) shows its address as text, and the page has no picture from it before it is run.
    assert_eq!(form, json!(["image/*", true, true, false, examples.len()]));
    let example_url = server.map(|s| format!("{}/example.png", s.origin));
    if let Some(url) = &example_url {
        let listed = browser
            .eval(&format!(
                "const li = document.querySelector('ul.examples li:last-child'); \
                 return [li.querySelector('button.example').textContent, \
                 li.querySelector('.media-example-url')?.textContent ?? null, \
                 li.querySelectorAll('img, audio').length, \
                 [...document.querySelectorAll('img, audio')] \
                 .filter((e) => e.getAttribute('src') === {url:?}).length];"
            ))
            .await;
        assert_eq!(listed, json!([URL_EXAMPLE, format!("From {url}"), 0, 0]));
    }

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
    // Readable and labelled as the other pages: every text at WCAG AA contrast, every control
    // (file picker, URL) with its label.
    assert_eq!(browser.low_contrast_texts().await, json!([]));
    let unlabelled = browser
        .eval(
            "return [...document.querySelectorAll('input, select, textarea')] \
             .filter((e) => !e.labels || e.labels.length === 0).map((e) => e.id)",
        )
        .await;
    assert_eq!(unlabelled, json!([]), "controls without a label");

    // The URL example: nothing fetched by the browser until it runs (an example's answer
    // later); run, the model's answer to that URL, and the picture there shown beside it.
    if let (Some(server), Some(url)) = (server, &example_url) {
        assert_eq!(
            server.browser_requests(),
            0,
            "the page fetched the example's URL"
        );
        browser
            .click("ul.examples li:last-child button.example")
            .await;
        let shown = answer_to(browser, URL_EXAMPLE).await;
        let expected = direct(c, stack, "digits", "image", json!({"image_url": url})).await;
        assert_shows(browser, &shown, &expected).await;
        assert_eq!(&shown_source(browser, "img").await, url);
        let look = browser
            .eval(
                "const i = document.querySelector('#media-shown img'); \
                 return i.decode().then(() => i.naturalWidth, () => 0);",
            )
            .await;
        assert_eq!(look, 8, "the picture at the example's URL, once run");
        assert!(server.browser_requests() >= 1);
    }

    // A file through the file input: read as base64 by the page, the same answer.
    let upload = examples[1]["image"].as_str().unwrap();
    pick_file(browser, stack, c, "digits", upload, "my-digit.png").await;
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
    let refused = send_directly(c, stack, "digits", "image", json!({"image": text}))
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
    let refused = send_directly(c, stack, "digits", "image", json!({"image_url": url}))
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

    // A URL the model may fetch: the answer to the picture there, which the browser shows.
    if let Some(server) = server {
        let picture = examples[1]["image"].as_str().unwrap();
        *server.file.lock().unwrap() = decode(browser, picture).await;
        let url = format!("{}/digit.png", server.origin);
        browser.type_into("#media-url", &url).await;
        browser.click("#media-url-form button[type=submit]").await;
        let shown = answer_to(browser, &url).await;
        let expected = direct(c, stack, "digits", "image", json!({"image_url": url})).await;
        assert_shows(browser, &shown, &expected).await;
        let by_file = direct(c, stack, "digits", "image", json!({"image": picture})).await;
        assert_eq!(
            expected["results"]["probabilities"], by_file["results"]["probabilities"],
            "the same picture by URL and by file"
        );
        assert_eq!(shown_source(browser, "img").await, url);
        let look = browser
            .eval(
                "const i = document.querySelector('#media-shown img'); \
                 return i.decode().then(() => i.naturalWidth, () => 0);",
            )
            .await;
        assert_eq!(look, 8, "the browser shows the 8x8 picture at the URL");
    }
    // No URL: the form says so, and sends nothing.
    browser.type_into("#media-url", " ").await;
    browser.click("#media-url-form button[type=submit]").await;
    browser
        .wait_text("#media-status", |t| {
            t.contains("Enter the URL of a picture")
        })
        .await;
}
