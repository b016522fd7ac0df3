//! The audio model's Try-it form: an example and a file picked, each beside a player.

use super::*;

/// spoken-digits: the form takes sounds; an example and an uploaded WAV answer as the model
/// does directly, each beside a player holding the very file sent.
pub(super) async fn sounds(browser: &Browser, stack: &impl App, c: &Client) {
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
    pick_file(browser, stack, c, "spoken-digits", upload, "my-word.wav").await;
}
