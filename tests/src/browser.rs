//! A real headless Chromium, driven over WebDriver (Debian's `chromium` and
//! `chromium-driver`) with the `fantoccini` client.
//!
//! [`Browser::start`] runs a private `chromedriver` on a free port and opens a session. Where
//! Chromium is not installed, a test gets `None` and a loud SKIPPED line, unless `cargo xtask
//! test` has Chromium, where it fails ([`crate::tools::require_or_skip`]).

use crate::tools::Tool;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::json;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a page gets to show what a test waits for. Generous: the test command runs three
/// test binaries at once on two cores, and cold runs twice saw a console page (the models page,
/// the Spin model page's quality plot) still loading at 20 s; each passed alone in seconds.
/// A page that works shows it in well under a second, so the wait costs a passing test nothing.
const WAIT: Duration = Duration::from_secs(45);

pub struct Browser {
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

fn installed(env: &str, candidates: &[&str]) -> Option<PathBuf> {
    if let Ok(p) = std::env::var(env) {
        return Some(PathBuf::from(p));
    }
    candidates.iter().map(PathBuf::from).find(|p| p.is_file())
}

impl Browser {
    /// A fresh headless browser with a `width` x `height` window, or `None` (announced
    /// loudly) where Chromium or its driver is not installed.
    pub async fn start(test: &str, width: u32, height: u32) -> Option<Self> {
        let chromium = installed(
            "E2E_CHROMIUM",
            &["/usr/bin/chromium", "/usr/bin/chromium-browser"],
        );
        let driver = installed("E2E_CHROMEDRIVER", &["/usr/bin/chromedriver"]);
        let found = chromium.zip(driver);
        let (chromium, driver) = crate::tools::require_or_skip(Tool::Browser, test, found)?;
        let port = crate::free_port();
        let driver = Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting chromedriver");
        let profile = crate::temp_dir();
        let capabilities = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless=new",
                    // Root in CI: Chromium's sandbox refuses to run as root.
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--no-first-run",
                    "--disable-extensions",
                    format!("--window-size={width},{height}"),
                    format!("--user-data-dir={}", profile.path().display()),
                ],
            },
        });
        let capabilities = capabilities.as_object().unwrap().clone();
        let url = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        let client = loop {
            match ClientBuilder::new(HttpConnector::new())
                .capabilities(capabilities.clone())
                .connect(&url)
                .await
            {
                Ok(c) => break c,
                Err(e) if started.elapsed() > Duration::from_secs(30) => {
                    panic!("{test}: no WebDriver session from chromedriver: {e}")
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        Some(Self {
            client,
            driver,
            _profile: profile,
        })
    }

    pub async fn goto(&self, url: &str) {
        self.client.goto(url).await.expect("navigating");
    }

    /// The text of the first element matching `css` once `ready` holds for it; panics with the
    /// page's text when it does not within [`WAIT`].
    pub async fn wait_text(&self, css: &str, ready: impl Fn(&str) -> bool) -> String {
        let started = Instant::now();
        let mut last = String::new();
        while started.elapsed() < WAIT {
            if let Ok(el) = self.client.find(Locator::Css(css)).await
                && let Ok(text) = el.text().await
            {
                if ready(&text) {
                    return text;
                }
                last = text;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let page = self.text("main").await;
        panic!(
            "`{css}` did not show what was expected within {WAIT:?}; it showed {last:?}; the page:\n{page}"
        );
    }

    /// The text of the first element matching `css` (empty when there is none).
    pub async fn text(&self, css: &str) -> String {
        match self.client.find(Locator::Css(css)).await {
            Ok(el) => el.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    /// Clicks the first element matching `css`. A page that re-renders between finding the
    /// element and clicking it (a live table) is tried again, a few times.
    pub async fn click(&self, css: &str) {
        for attempt in 1..=3 {
            let el = self
                .client
                .find(Locator::Css(css))
                .await
                .unwrap_or_else(|e| panic!("no `{css}` to click: {e}"));
            match el.click().await {
                Ok(_) => return,
                Err(fantoccini::error::CmdError::Standard(e))
                    if e.error == fantoccini::error::ErrorStatus::StaleElementReference
                        && attempt < 3 =>
                {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("clicking `{css}`: {e}"),
            }
        }
    }

    /// Types `text` into the field `css` (cleared first), as a user would.
    pub async fn type_into(&self, css: &str, text: &str) {
        let field = self
            .client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no field `{css}`: {e}"));
        field.clear().await.expect("clearing");
        field.send_keys(text).await.expect("typing");
    }

    /// Runs a script in the page and returns its value.
    pub async fn eval(&self, script: &str) -> serde_json::Value {
        self.client
            .execute(script, vec![])
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// The visible texts of the page whose contrast with their background is below WCAG
    /// AA (4.5:1, or 3:1 for large text); empty when all pass.
    pub async fn low_contrast_texts(&self) -> serde_json::Value {
        self.eval(include_str!("contrast.js")).await
    }

    /// Saves a screenshot as `target/console-screenshots/<name>.png`; returns its path.
    pub async fn screenshot(&self, name: &str) -> PathBuf {
        let png = self.client.screenshot().await.expect("taking a screenshot");
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        let dir = crate::target_dir().join("console-screenshots");
        std::fs::create_dir_all(&dir).expect("creating the screenshot directory");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).expect("writing the screenshot");
        println!("screenshot: {}", path.display());
        path
    }

    /// Ends the session; dropping `self` then stops the driver.
    pub async fn close(self) {
        let _ = self.client.clone().close().await;
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
