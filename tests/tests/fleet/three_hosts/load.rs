//! The load on the fleet: chat writers (each appends to a dialog of its own and reads every
//! eighth append back, through whichever host HAProxy picks), a reader of the chat list, a
//! client per model predicting, and a client per host registering and unregistering in
//! that host's own registry. Every request is recorded with when it was sent and answered,
//! so the test can say which failures fell inside a window where failures are allowed.

use e2e_tests::Client;
use fleet::{CHAT_TOKEN, Fleet, REGISTRY_PORT};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Chat writers.
const WRITERS: usize = 4;

/// One request and its answer.
#[derive(Clone)]
pub struct Record {
    pub what: String,
    pub sent: Instant,
    pub done: Instant,
    /// `None`: no HTTP answer at all.
    pub status: Option<u16>,
    /// The JSON error body's code, if there was one.
    pub code: Option<String>,
    pub detail: String,
}

impl Record {
    pub fn ok(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }

    /// Whether the request was under way at some moment of `[from, to]`.
    pub fn overlaps(&self, from: Instant, to: Instant) -> bool {
        self.sent <= to && self.done >= from
    }
}

/// What the load saw.
pub struct Seen {
    pub records: Vec<Record>,
    /// Per dialog id: every append a host acknowledged (201).
    pub acknowledged: Vec<(String, Vec<String>)>,
    /// Reads that came back 200 without an append acknowledged before them.
    pub missing_after_ack: Vec<String>,
}

pub struct Load {
    stop: Arc<AtomicBool>,
    records: Arc<Mutex<Vec<Record>>>,
    missing: Arc<Mutex<Vec<String>>>,
    writers: Vec<tokio::task::JoinHandle<(String, Vec<String>)>>,
    others: Vec<tokio::task::JoinHandle<()>>,
}

/// Sends one request and records it.
async fn send(
    c: &Client,
    records: &Mutex<Vec<Record>>,
    what: &str,
    method: hyper::Method,
    url: &str,
    body: Option<&Value>,
    token: Option<&str>,
) -> Option<e2e_tests::Reply> {
    let sent = Instant::now();
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![("content-type", "application/json")];
    if let Some(auth) = &auth {
        headers.push(("authorization", auth.as_str()));
    }
    let body = body.map(|b| b.to_string().into_bytes());
    let reply = c.try_send(method, url, body, &headers).await;
    let done = Instant::now();
    let (status, code, detail) = match &reply {
        Ok(r) => {
            let code = serde_json::from_slice::<Value>(&r.body)
                .ok()
                .and_then(|v| v["error_code"].as_str().map(str::to_owned));
            (Some(r.status), code, r.text().chars().take(200).collect())
        }
        Err(e) => (None, None, e.to_string()),
    };
    records.lock().unwrap().push(Record {
        what: what.to_owned(),
        sent,
        done,
        status,
        code,
        detail,
    });
    reply.ok()
}

impl Load {
    /// Starts every client; `models` are (name, request) pairs.
    pub async fn start(fleet: &Fleet, models: Vec<(String, Value)>) -> Self {
        let (stop, records) = (Arc::new(AtomicBool::new(false)), Arc::default());
        let missing: Arc<Mutex<Vec<String>>> = Arc::default();
        let c = Client::new();
        let mut writers = Vec::new();
        for w in 0..WRITERS {
            let created = c
                .post_json(
                    &fleet.haproxy.url("/api/chats"),
                    &json!({"chatName": format!("fleet writer {w}")}),
                    Some(CHAT_TOKEN),
                )
                .await;
            assert_eq!(created.status, 201, "{}", created.text());
            let id = created.value()["id"].as_str().unwrap().to_owned();
            let append = fleet.haproxy.url(&format!("/api/dialog/messages?id={id}"));
            let read = fleet.haproxy.url(&format!("/api/dialog?id={id}"));
            let (c, stop, records, missing) = (
                c.clone(),
                stop.clone(),
                Arc::clone(&records),
                missing.clone(),
            );
            writers.push(tokio::spawn(async move {
                let mut acked = Vec::new();
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let content = format!("w{w}-{n}");
                    n += 1;
                    let body = json!({"role": "user", "content": content});
                    let post = hyper::Method::POST;
                    let r = send(
                        &c,
                        &records,
                        "chat write",
                        post,
                        &append,
                        Some(&body),
                        Some(CHAT_TOKEN),
                    )
                    .await;
                    match r {
                        Some(r) if r.status == 201 => acked.push(content),
                        _ => tokio::time::sleep(Duration::from_millis(20)).await,
                    }
                    if acked.len() % 8 == 7 {
                        let get = hyper::Method::GET;
                        if let Some(r) =
                            send(&c, &records, "chat read", get, &read, None, None).await
                            && r.status == 200
                        {
                            let text = r.text();
                            for a in &acked {
                                if !text.contains(&format!("\"{a}\"")) {
                                    missing.lock().unwrap().push(format!("{id}: {a}"));
                                }
                            }
                        }
                    }
                }
                (id, acked)
            }));
        }
        let mut others = Vec::new();
        let list = fleet.haproxy.url("/api/chats");
        others.push(spawn_loop(&c, &stop, &records, move |c, records| {
            let list = list.clone();
            Box::pin(async move {
                send(
                    &c,
                    &records,
                    "chat list",
                    hyper::Method::GET,
                    &list,
                    None,
                    None,
                )
                .await;
            })
        }));
        for (name, request) in models {
            let url = fleet.haproxy.url(&format!("/models/{name}/predict"));
            let what = format!("predict {name}");
            others.push(spawn_loop(&c, &stop, &records, move |c, records| {
                let (url, request, what) = (url.clone(), request.clone(), what.clone());
                Box::pin(async move {
                    send(
                        &c,
                        &records,
                        &what,
                        hyper::Method::POST,
                        &url,
                        Some(&request),
                        None,
                    )
                    .await;
                })
            }));
        }
        for i in 0..fleet.len() {
            let register = fleet.url(i, REGISTRY_PORT, "/register");
            let base = fleet.url(i, REGISTRY_PORT, "");
            let what = format!("registration on {}", fleet::server(i));
            others.push(spawn_loop(&c, &stop, &records, move |c, records| {
                let (register, base, what) = (register.clone(), base.clone(), what.clone());
                Box::pin(async move {
                    // A name of its own each time: a registration whose answer was lost (its
                    // host killed meanwhile) stays until its lease ends, as the rules say,
                    // and must not block the next.
                    let model = format!("load-{}", uuid::Uuid::new_v4().simple());
                    let body = json!({
                        "app_name": "fleet-load", "app_version": "1.0.0", "model_name": model,
                        "process_id": std::process::id(), "preferred_port": null, "reason": "fleet test",
                        "metadata": {"model_type": "test", "capabilities": ["none"]}
                    });
                    let post = hyper::Method::POST;
                    let Some(r) =
                        send(&c, &records, &what, post, &register, Some(&body), None).await
                    else {
                        return;
                    };
                    if r.status != 200 {
                        return;
                    }
                    let v = r.value();
                    let url = format!(
                        "{base}/unregister/{}?registration_id={}",
                        v["assigned_port"],
                        v["registration_id"].as_str().unwrap_or_default()
                    );
                    send(&c, &records, &what, hyper::Method::DELETE, &url, None, None).await;
                })
            }));
        }
        Self {
            stop,
            records,
            missing,
            writers,
            others,
        }
    }

    /// Stops every client and returns what they saw.
    pub async fn stop(self) -> Seen {
        self.stop.store(true, Ordering::Relaxed);
        let mut acknowledged = Vec::new();
        for w in self.writers {
            acknowledged.push(w.await.expect("a writer panicked"));
        }
        for o in self.others {
            o.await.expect("a client panicked");
        }
        let records = std::mem::take(&mut *self.records.lock().unwrap());
        let missing_after_ack = std::mem::take(&mut *self.missing.lock().unwrap());
        Seen {
            records,
            acknowledged,
            missing_after_ack,
        }
    }
}

type Step = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Runs `step` again and again until the load stops, a little apart on failure.
fn spawn_loop(
    c: &Client,
    stop: &Arc<AtomicBool>,
    records: &Arc<Mutex<Vec<Record>>>,
    step: impl Fn(Client, Arc<Mutex<Vec<Record>>>) -> Step + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    let (c, stop, records) = (c.clone(), stop.clone(), records.clone());
    tokio::spawn(async move {
        while !stop.load(Ordering::Relaxed) {
            step(c.clone(), records.clone()).await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
}
