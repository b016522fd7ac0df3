//! Section 9, the chat list at scale (issue 22): `GET /api/chats` whole and one 50-chat
//! page, with 10,000 stored chats (1,000 with `--quick`), on `runtime-host serve chat.wasm`.

use super::peers::Paths;
use super::procs::{Proc, addr_in, fresh_dir};
use super::report::{ListRow, Report};
use super::section::{Section, no_targets};
use anyhow::{Context, Result, bail};
use hyper::Method;
use service_client::HttpClient;
use std::sync::Arc;
use std::time::{Duration, Instant};

const TOKEN: &str = "bench-token";

pub const SECTION: Section = Section {
    name: "chats",
    about: "the chat list with 10,000 chats, whole and paged",
    run: |b, r| {
        Box::pin(async move {
            r.chat_list = chat_list(b.paths, b.args.quick).await?;
            Ok(())
        })
    },
    targets: no_targets,
    print,
};

pub async fn chat_list(p: &Paths, quick: bool) -> Result<Vec<ListRow>> {
    let chats = if quick { 1_000 } else { 10_000 };
    let data = fresh_dir(&p.work, "chat-list")?;
    let component = p.component("chat")?;
    let args = vec![
        "serve".into(),
        component.display().to_string(),
        "--listen".into(),
        "127.0.0.1:0".into(),
        "--variable".into(),
        format!("chat_admin_token={TOKEN}"),
        "--data-dir".into(),
        data.display().to_string(),
    ];
    let mut proc = Proc::spawn("chat-list", &p.host, &args, &p.log("chat-list"))?;
    let line = proc
        .lines_until("listening on", Duration::from_secs(120))
        .await?;
    let base = format!(
        "http://{}",
        addr_in(line.last().context("no listening line")?)?
    );
    eprintln!("chat list: storing {chats} chats");
    fill(&base, chats).await?;
    let client = HttpClient::new(Duration::from_secs(60));
    let mut rows = Vec::new();
    for (request, reps) in [("/api/chats", 5), ("/api/chats?limit=50", 20)] {
        let url = format!("{base}{request}");
        let mut times = Vec::with_capacity(reps);
        let mut bytes = 0;
        for _ in 0..reps {
            let started = Instant::now();
            let r = client.send(Method::GET, &url, None, None).await?;
            times.push(started.elapsed().as_secs_f64() * 1e3);
            if r.status != 200 {
                bail!("{request} answered {}: {}", r.status, r.error_text());
            }
            bytes = r.body.len();
        }
        times.sort_by(f64::total_cmp);
        rows.push(ListRow {
            chats,
            request: request.into(),
            p50_ms: times[times.len() / 2],
            max_ms: times[times.len() - 1],
            bytes,
        });
    }
    proc.stop().await;
    Ok(rows)
}

/// Stores `n` chats of two short messages each, from 16 clients at once.
async fn fill(base: &str, n: usize) -> Result<()> {
    let client = Arc::new(HttpClient::new(Duration::from_secs(60)));
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (client, next, url) = (client.clone(), next.clone(), format!("{base}/api/chats"));
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= n {
                        return Ok(());
                    }
                    let body = serde_json::json!({"chatName": format!("bench chat {i}"), "messages": [
                        {"role": "user", "content": "What is the logP of aspirin?"},
                        {"role": "assistant", "content": "About 1.19 (Crippen)."}]});
                    let r = client
                        .send(Method::POST, &url, Some(serde_json::to_vec(&body)?), Some(TOKEN))
                        .await?;
                    if r.status != 201 {
                        bail!("storing a chat answered {}: {}", r.status, r.error_text());
                    }
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.context("a chat-filling client panicked")??;
    }
    Ok(())
}

fn print(r: &Report) {
    if let Some(first) = r.chat_list.first() {
        println!("\nchat list with {} chats stored", first.chats);
    }
    for c in &r.chat_list {
        println!(
            "  GET {:<22} p50 {:>7.2} ms, max {:>7.2} ms, {:>9} bytes",
            c.request, c.p50_ms, c.max_ms, c.bytes
        );
    }
}
