//! Pictures by URL: fetched by the component through the host's outgoing HTTP, only from
//! hosts the deployment may reach; this machine's own services (the registry, chat) and the
//! clouds' metadata address are refused even where every host is allowed; a failed or
//! oversized fetch is its own 400; a batch's URLs are fetched at once.

use super::{examples, predict, prediction, serve};
use e2e_tests::served::Served;
use e2e_tests::{Client, Host, temp_dir};
use serde_json::json;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The digits examples served as `/0.png`, `/1.png`, ... (their digits, in order), and a
/// file of 11 MiB (`/huge.png`, over the default cap of 10 MiB).
fn pictures(delay: Duration) -> (Served, Vec<String>) {
    let mut files = HashMap::new();
    let mut digits = Vec::new();
    for (i, (_, digit, bytes)) in examples("digits", "image").into_iter().enumerate() {
        files.insert(format!("/{i}.png"), ("image/png", bytes));
        digits.push(digit);
    }
    files.insert("/huge.png".into(), ("image/png", vec![0u8; 11 << 20]));
    (Served::start(files, delay), digits)
}

#[tokio::test]
async fn a_picture_is_fetched_from_an_allowed_host_and_only_from_one() {
    let (files, digits) = pictures(Duration::ZERO);
    let dir = temp_dir();
    let c = Client::new();
    let allowed = serve("digits", dir.path(), &[files.origin()]);
    let url = files.url("/0.png");
    let r = predict(&c, &allowed, "image", json!({"image_url": url})).await;
    assert_eq!(prediction(&r), digits[0]);
    let input = &r.value()["results"]["input"];
    assert_eq!(input["source"], "url");
    assert_eq!(input["url"], url.as_str());
    assert_eq!(files.hits()["/0.png"], 1);
    let r = predict(
        &c,
        &allowed,
        "image",
        json!({"image_url": files.url("/missing.png")}),
    )
    .await;
    let body = r.assert_error(400, "fetch_failed");
    assert!(body.error.contains("404"), "{}", body.error);
    let r = predict(
        &c,
        &allowed,
        "image",
        json!({"image_url": files.url("/huge.png")}),
    )
    .await;
    r.assert_error(400, "media_too_large");
    // A host the deployment was not given.
    let dir2 = temp_dir();
    let denied = serve("digits", dir2.path(), &[]);
    let r = predict(&c, &denied, "image", json!({"image_url": url})).await;
    r.assert_error(400, "url_not_allowed");
    assert_eq!(files.hits()["/0.png"], 1, "a refused URL is never fetched");
}

#[tokio::test]
async fn the_machines_own_services_are_refused_even_when_every_host_is_allowed() {
    let dir = temp_dir();
    let c = Client::new();
    let registry = e2e_tests::HostBuilder::registry(&dir.path().join("registry")).start();
    let chat = e2e_tests::chat::host(&dir.path().join("chat"));
    let open = serve("digits", &dir.path().join("model"), &["*://*:*".to_owned()]);
    let port = |h: &Host| h.base_url().rsplit(':').next().unwrap().to_owned();
    for url in [
        format!("http://127.0.0.1:{}/registry", port(&registry)),
        format!("http://localhost:{}/api/chats", port(&chat)),
        format!("http://[::1]:{}/registry", port(&registry)),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://10.0.0.1/picture.png".to_owned(),
    ] {
        let r = predict(&c, &open, "image", json!({"image_url": url})).await;
        let body = r.assert_error(400, "url_not_allowed");
        assert!(!body.error.contains("registration_id"), "{}", body.error);
    }
}

#[tokio::test]
async fn a_batchs_urls_are_fetched_at_once_and_each_fails_alone() {
    let (files, digits) = pictures(Duration::from_millis(1500));
    let dir = temp_dir();
    let c = Client::new();
    let host = serve("digits", dir.path(), &[files.origin()]);
    let urls: Vec<String> = (0..digits.len())
        .map(|i| files.url(&format!("/{i}.png")))
        .chain([files.url("/missing.png")])
        .collect();
    let started = Instant::now();
    let r = predict(&c, &host, "image", json!({"image_urls": urls})).await;
    let took = started.elapsed();
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.value();
    let items = v["results"]["items"].as_array().unwrap();
    for (i, digit) in digits.iter().enumerate() {
        assert_eq!(items[i]["results"]["prediction"], digit.as_str(), "{v}");
    }
    assert_eq!(items[digits.len()]["success"], false);
    // Five fetches of 1.5 s each, at once: well under their 7.5 s one after another.
    assert!(took < Duration::from_millis(4500), "took {took:?}");
}

/// A batch holds at most 64 files (a URL list of a thousand opened a thousand connections to
/// one host at once, and held every file): more are refused whole.
#[tokio::test]
async fn a_batch_of_more_files_than_the_model_holds_is_refused() {
    let dir = temp_dir();
    let c = Client::new();
    let host = serve("digits", dir.path(), &[]);
    let urls: Vec<String> = (0..65)
        .map(|i| format!("http://example.org/{i}.png"))
        .collect();
    let r = predict(&c, &host, "image", json!({"image_urls": urls})).await;
    let body = r.assert_error(400, "invalid_field");
    assert!(body.error.contains("send 1 to 64"), "{}", body.error);
}
