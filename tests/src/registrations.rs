//! Many registrations at once, the load the registry's port assignment must survive.

use crate::Client;
use edge_api::registry::RegistrationResponse;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Clients registering at the same time.
const CLIENTS: usize = 32;

/// Sends `total` registrations, `body(i)` the i-th, from [`CLIENTS`] clients at once spread
/// over the registries at `urls` (their `/register`). Each must succeed; returns the ports
/// assigned, in no particular order.
pub async fn register_concurrently(
    urls: &[String],
    total: usize,
    body: impl Fn(usize) -> Value + Send + Sync + 'static,
) -> Vec<u16> {
    let (client, next, body) = (Client::new(), Arc::new(AtomicUsize::new(0)), Arc::new(body));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|k| {
            let (c, next, body) = (client.clone(), next.clone(), body.clone());
            let url = urls[k % urls.len()].clone();
            tokio::spawn(async move {
                let mut ports = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total {
                        return ports;
                    }
                    let r = c.post_json(&url, &body(i), None).await;
                    assert_eq!(r.status, 200, "{}", r.text());
                    ports.push(r.json::<RegistrationResponse>().assigned_port);
                }
            })
        })
        .collect();
    let mut ports = Vec::new();
    for c in clients {
        ports.extend(c.await.expect("a registering client panicked"));
    }
    ports
}
