//! The Try-it form of an image model (models/digits) and an audio model
//! (models/spoken-digits) in headless Chromium against a real `up` (issue 58 §4): an example
//! run from its button, one by URL that loads nothing until it is run, a file through the
//! file input, a file dropped on the drop zone, a file the model cannot read, a URL the model
//! may fetch and one it may not; each answer (or error) compared with what the model says to
//! the same request sent directly, and what was sent shown beside it (the picture, or a
//! player for the sound).

use super::*;
use e2e_tests::Reply;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod pictures;
mod sounds;
use pictures::pictures;
use sounds::sounds;

#[tokio::test(flavor = "multi_thread")]
async fn the_try_it_form_takes_pictures_and_sounds_in_a_real_browser() {
    let Some(browser) = Browser::start("the_try_it_form_takes_media", 1280, 1000).await else {
        return;
    };
    let server = FileServer::start("image/png").await;
    let models = e2e_tests::temp_dir();
    for name in ["digits", "spoken-digits"] {
        e2e_tests::copy_model(&e2e_tests::model_dir(name), &models.path().join(name));
    }
    // The digits model may fetch from the picture server, named exactly (it is on loopback),
    // and has one more example there, by URL (its self-test fetches it at start-up).
    let (_, digit, picture) = e2e_tests::example_files("digits", "image").remove(1);
    *server.file.lock().unwrap() = picture;
    let manifest = models.path().join("digits/model.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str(&format!(
        "\n[network]\nallowed_outbound_hosts = [\"{origin}\"]\n\n\
         [[test_examples.examples]]\nname = \"{URL_EXAMPLE}\"\n\
         description = \"the held-out {digit} on a web server\"\ncategory = \"{digit}\"\n\
         image_url = \"{origin}/example.png\"\n",
        origin = server.origin
    ));
    std::fs::write(&manifest, text).unwrap();
    let stack = Stack::up(&["--models", models.path().to_str().unwrap()], 4);
    let c = Client::new();
    pictures(&browser, &stack, &c, Some(&server)).await;
    sounds(&browser, &stack, &c).await;
    phone(&browser, &stack).await;
    browser.close().await;
}

/// The same form under Spin (the project's `spin.toml`, whose console lists both models): the
/// same answers and errors as the models give directly there; `spin.toml` lets them fetch
/// from no host, so only the refused URL is tried.
#[tokio::test(flavor = "multi_thread")]
async fn under_spin_the_try_it_form_takes_pictures_and_sounds_in_a_real_browser() {
    let Some(app) = SpinApp::up("the media Try-it form under Spin", "t0ken") else {
        return;
    };
    let Some(browser) = Browser::start("the_try_it_form_under_spin", 1280, 1000).await else {
        return;
    };
    let c = Client::new();
    pictures(&browser, &app, &c, None).await;
    sounds(&browser, &app, &c).await;
    phone(&browser, &app).await;
    browser.close().await;
}

/// At phone width the form and an answer beside its picture fit the screen: nothing scrolls
/// sideways but the tables' own boxes.
async fn phone(browser: &Browser, stack: &impl App) {
    phone_width(browser).await;
    browser.goto(&stack.app("/#/try/digits")).await;
    browser.wait_text("ul.examples", |t| !t.is_empty()).await;
    browser.click("button.example").await;
    browser
        .wait_text("#result-area", |t| t.contains("Probabilities"))
        .await;
    assert_no_sideways_scroll(browser).await;
    browser.screenshot("try-digits-phone").await;
}

/// The name of the digits example added by URL (`image_url` on the [`FileServer`]).
const URL_EXAMPLE: &str = "a digit by URL";

/// A web server on loopback answering every request with the file it holds now, as the
/// server of a URL a user types would; it keeps each request's head, to tell who asked.
struct FileServer {
    origin: String,
    file: Arc<Mutex<Vec<u8>>>,
    heads: Arc<Mutex<Vec<String>>>,
}

impl FileServer {
    async fn start(content_type: &'static str) -> Self {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        let file = Arc::new(Mutex::new(Vec::new()));
        let heads = Arc::new(Mutex::new(Vec::new()));
        let (served, log) = (file.clone(), heads.clone());
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let body = served.lock().unwrap().clone();
                let log = log.clone();
                tokio::spawn(async move {
                    // The request's head, up to its blank line; the answer is the same for all.
                    let (mut head, mut buf) = (Vec::new(), [0u8; 1024]);
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    log.lock()
                        .unwrap()
                        .push(String::from_utf8_lossy(&head).into_owned());
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\n\
                         content-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = stream.write_all(reply.as_bytes()).await;
                    let _ = stream.write_all(&body).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        Self {
            origin,
            file,
            heads,
        }
    }

    /// The requests a browser made (a browser's `User-Agent` starts `Mozilla/`; the model's
    /// own fetches carry its runtime's name).
    fn browser_requests(&self) -> usize {
        let heads = self.heads.lock().unwrap();
        heads
            .iter()
            .filter(|h| h.to_ascii_lowercase().contains("\r\nuser-agent: mozilla/"))
            .count()
    }
}

/// The model's reply to `data` sent directly, as the form would send it.
async fn send_directly(
    c: &Client,
    stack: &impl App,
    model: &str,
    kind: &str,
    data: Value,
) -> Reply {
    let request = json!({"input_type": kind, "data": data});
    c.post_json(
        &stack.app(&format!("/models/{model}/predict")),
        &request,
        None,
    )
    .await
}

/// What the model answers to `data` sent directly, as the form would send it.
async fn direct(c: &Client, stack: &impl App, model: &str, kind: &str, data: Value) -> Value {
    send_directly(c, stack, model, kind, data).await.value()
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

/// `base64` decoded by the browser's own `atob`.
async fn decode(browser: &Browser, base64: &str) -> Vec<u8> {
    let bytes = browser
        .eval(&format!(
            "return Array.from(atob({base64:?}), (ch) => ch.charCodeAt(0));"
        ))
        .await;
    serde_json::from_value(bytes).unwrap()
}

/// `base64` decoded and written to `dir/name`; returns the path.
async fn write_file(browser: &Browser, base64: &str, dir: &std::path::Path, name: &str) -> String {
    let bytes = decode(browser, base64).await;
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Picks the file of `base64` named `name` through the form's file input, as a user would:
/// the page reads it as base64 and shows the model's own answer to that file sent directly,
/// and beside it the very file as a `data:` URL of the type the browser gives the name's
/// extension (a picture for a PNG, a player for a WAV).
async fn pick_file(
    browser: &Browser,
    stack: &impl App,
    c: &Client,
    model: &str,
    base64: &str,
    name: &str,
) {
    let (kind, mime, element) = match name.rsplit_once('.') {
        Some((_, "png")) => ("image", "image/png", "img"),
        Some((_, "wav")) => ("audio", "audio/wav", "audio"),
        _ => panic!("no media type for {name}"),
    };
    let dir = e2e_tests::temp_dir();
    let path = write_file(browser, base64, dir.path(), name).await;
    let picker = browser
        .client
        .find(fantoccini::Locator::Css("#media-file"))
        .await
        .unwrap();
    picker.send_keys(&path).await.unwrap();
    let shown = answer_to(browser, name).await;
    let expected = direct(c, stack, model, kind, json!({ kind: base64 })).await;
    assert_shows(browser, &shown, &expected).await;
    assert_eq!(
        shown_source(browser, element).await,
        format!("data:{mime};base64,{base64}")
    );
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
