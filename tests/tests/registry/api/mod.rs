//! Interface C over HTTP: port assignment under concurrency, leases, unregistration,
//! persistence, and the native host's process monitoring.

mod bad_requests;
mod leases;

use e2e_tests::registrations::register_concurrently;
use e2e_tests::{App, Client, HostBuilder, temp_dir};
use edge_api::registry::{RegistrationResponse, RegistryListing};
use serde_json::{Value, json};
use std::collections::HashSet;

pub fn registration(model: &str, preferred: Option<u16>) -> Value {
    json!({
        "app_name": "e2e", "app_version": "1.2.0", "model_name": model,
        "process_id": std::process::id(), "preferred_port": preferred,
        "reason": "test", "metadata": {"model_type": "test", "capabilities": ["none"]}
    })
}

pub async fn register(c: &Client, h: &impl App, body: &Value) -> RegistrationResponse {
    let r = c.post_json(&h.app("/register"), body, None).await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

pub async fn listing(c: &Client, h: &impl App) -> RegistryListing {
    let r = c.get(&h.app("/registry")).await;
    assert_eq!(r.status, 200);
    assert!(
        !r.text().contains("registration_id"),
        "ids never leak: {}",
        r.text()
    );
    r.json()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn five_hundred_concurrent_registrations_get_distinct_ports_from_5100() {
    let dir = temp_dir();
    // One test process (and user) holds all 500.
    let h = HostBuilder::registry(dir.path())
        .arg("--max-per-process")
        .arg("0")
        .arg("--max-per-user")
        .arg("0")
        .start();
    let urls = [h.url("/register")];
    let ports = register_concurrently(&urls, 500, |i| registration(&format!("m{i}"), None)).await;
    let distinct: HashSet<u16> = ports.iter().copied().collect();
    assert_eq!(ports.len(), 500);
    assert_eq!(
        distinct,
        (5100..5600).collect(),
        "exactly 5100..=5599, none twice"
    );
    let list = listing(&Client::new(), &h).await;
    assert_eq!(list.count, 500, "none lost");
    assert_eq!(list.registrations.len(), 500);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_for_one_preferred_port_only_one_wins() {
    let dir = temp_dir();
    let h = HostBuilder::registry(dir.path()).start();
    let c = Client::new();
    let racers: Vec<_> = (0..16)
        .map(|i| {
            let (c, url) = (c.clone(), h.url("/register"));
            tokio::spawn(async move {
                c.post_json(&url, &registration(&format!("r{i}"), Some(5500)), None)
                    .await
                    .json::<RegistrationResponse>()
            })
        })
        .collect();
    let mut winners = 0;
    let mut ports = HashSet::new();
    for r in racers {
        let r = r.await.unwrap();
        assert!(ports.insert(r.assigned_port));
        if r.assigned_port == 5500 {
            winners += 1;
        } else {
            assert!(r.message.contains("in use"), "{}", r.message);
        }
    }
    assert_eq!(winners, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn preferred_port_free_taken_out_of_range_and_reserved() {
    let dir = temp_dir();
    let h = HostBuilder::registry(dir.path()).start();
    let c = Client::new();
    let free = register(&c, &h, &registration("a", Some(5123))).await;
    assert_eq!(free.assigned_port, 5123);
    assert_eq!(free.message, "assigned preferred port 5123");
    let taken = register(&c, &h, &registration("b", Some(5123))).await;
    assert_eq!(taken.assigned_port, 5100);
    assert!(
        taken.message.contains("5123 is in use"),
        "{}",
        taken.message
    );
    let outside = register(&c, &h, &registration("c", Some(8080))).await;
    assert_eq!(outside.assigned_port, 5101);
    assert!(
        outside
            .message
            .contains("outside the assignable range 5100-5999"),
        "{}",
        outside.message
    );
    let reserved = register(&c, &h, &registration("d", Some(5000))).await;
    assert_eq!(reserved.assigned_port, 5102);
    assert!(
        reserved.message.contains("reserved"),
        "{}",
        reserved.message
    );
    // The response carries everything the spec lists.
    assert!(uuid_like(&free.registration_id));
    assert!(
        edge_api::time::parse_iso8601_no_zone(&free.expires_at).is_some(),
        "{}",
        free.expires_at
    );
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36 && s.chars().filter(|c| *c == '-').count() == 4
}
