//! Issue 56 §7: under Spin on Redis the registry changes its lease table holding one lock
//! for the whole registry (guest-kit's lock of increments, `guest-kit/lock/registry/leases`:
//! Spin's Redis store cannot swap). Strangers sending unregisters and heartbeats with guessed
//! registration ids took that lock for every request, before any check: 64 of them cut real
//! registrations tenfold, with 503s. A request is now checked on the table as it is, without
//! the lock, and a wrong id is refused before the lock is ever taken.

use e2e_tests::chat::TOKEN;
use e2e_tests::redis::RedisServer;
use e2e_tests::registrations::register_concurrently;
use e2e_tests::spin::SpinApp;
use e2e_tests::{Client, temp_dir};
use edge_api::registry::RegistrationResponse;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Strangers at once, as in the issue.
const STRANGERS: usize = 64;
/// Guesses each stranger sends, alternating unregister and heartbeat.
const GUESSES: usize = 8;
/// Real registrations made while the strangers guess.
const REAL: usize = 48;
/// The lock of the registry's lease table, as Spin's registry keeps it (no scope prefix).
const LOCK: &str = "guest-kit/lock/registry/leases";

fn registration(model: &str) -> Value {
    json!({
        "app_name": "lock-test", "app_version": "1.0.0", "model_name": model,
        "process_id": std::process::id(), "preferred_port": null, "reason": "test",
        "metadata": {}
    })
}

/// `STRANGERS` clients guessing ids for `port`; each answer must be a refusal, never 200 or
/// 503. Returns how many answered.
async fn guess(c: &Client, base: &str, port: u16) -> usize {
    let strangers: Vec<_> = (0..STRANGERS)
        .map(|k| {
            let (c, base) = (c.clone(), base.to_owned());
            tokio::spawn(async move {
                for g in 0..GUESSES {
                    let guessed = uuid::Uuid::new_v4().to_string();
                    let r = if (k + g) % 2 == 0 {
                        let url = format!("{base}/unregister/{port}?registration_id={guessed}");
                        c.delete(&url, None).await
                    } else {
                        let body = json!({ "registration_id": guessed });
                        c.post_json(&format!("{base}/heartbeat/{port}"), &body, None)
                            .await
                    };
                    assert!(
                        matches!(r.status, 403 | 404 | 409),
                        "a guessed id on port {port}: {} {}",
                        r.status,
                        r.text()
                    );
                }
            })
        })
        .collect();
    for s in strangers {
        s.await.expect("a stranger panicked");
    }
    STRANGERS * GUESSES
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn strangers_guessing_ids_never_hold_the_registrys_lock() {
    let Some(redis) = RedisServer::start("strangers_guessing_ids") else {
        return;
    };
    let dir = temp_dir();
    let config = redis.runtime_config(dir.path(), 0);
    let Some(spin) = SpinApp::up_with("strangers on the lock", TOKEN, Some(&config), &[]) else {
        return;
    };
    let base = spin.base_url();
    let c = Client::new();
    let r = c
        .post_json(&format!("{base}/register"), &registration("victim"), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let victim: RegistrationResponse = r.json();
    let port = victim.assigned_port;

    // The strangers alone, the lock watched all along: it is never seen held.
    let watching = Arc::new(AtomicBool::new(true));
    let watcher = {
        let (watching, redis) = (watching.clone(), Arc::new(redis));
        let watched = redis.clone();
        let handle = std::thread::spawn(move || {
            let (mut samples, mut held) = (0, Vec::new());
            while watching.load(Ordering::Relaxed) {
                let value = watched.cli(0, &["GET", LOCK]);
                samples += 1;
                if value.trim().parse::<i64>().is_ok_and(|v| v != 0) {
                    held.push(value.trim().to_owned());
                }
            }
            (samples, held)
        });
        (handle, redis)
    };
    let guessed = guess(&c, &base, port).await;
    watching.store(false, Ordering::Relaxed);
    let (handle, redis) = watcher;
    let (samples, held) = handle.join().unwrap();
    assert!(samples > 10, "the lock was sampled only {samples} times");
    assert!(
        held.is_empty(),
        "{guessed} guessed ids held the registry's lock in {} of {samples} samples, e.g. {:?}",
        held.len(),
        held.first()
    );

    // The strangers again, with real registrations at the same time: every one succeeds
    // (`register_concurrently` asserts 200 for each, so no 503) and is listed.
    let urls = [format!("{base}/register")];
    let (ports, _) = tokio::join!(
        register_concurrently(&urls, REAL, |i| registration(&format!("real-{i}"))),
        guess(&c, &base, port)
    );
    assert_eq!(ports.len(), REAL);
    let listed = c.get(&format!("{base}/registry")).await.value();
    assert_eq!(listed["count"], 1 + REAL, "{listed}");

    // The victim's registration is intact, and its own heartbeat still renews it.
    let r = c
        .post_json(
            &format!("{base}/heartbeat/{port}"),
            &json!({ "registration_id": victim.registration_id }),
            None,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    drop(redis);
}

/// A `spin` killed mid-burst left two timestamps on the registry's lock (a holder and a
/// racer, dead together), and every host on the Redis answered 503 for 30 s. Such a residue
/// is now broken once it has stood unchanged for 10 s (3 s for the holder to write, 7 s for a
/// write in flight: nothing inside a Spin guest proves its holder dead sooner), so
/// registrations go through again well before 30 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_spins_residue_on_the_lock_is_broken_within_ten_seconds() {
    let Some(redis) = RedisServer::start("a_dead_spins_residue") else {
        return;
    };
    let dir = temp_dir();
    let config = redis.runtime_config(dir.path(), 0);
    let Some(spin) = SpinApp::up_with("a dead holder's residue", TOKEN, Some(&config), &[]) else {
        return;
    };
    let base = spin.base_url();
    let c = Client::new();
    let r = c
        .post_json(&format!("{base}/register"), &registration("before"), None)
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    // What two requests killed between their increments leave: two fresh timestamps.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let residue = (2 * now).to_string();
    redis.cli(0, &["INCRBY", LOCK, &residue]);
    let planted = std::time::Instant::now();
    let (mut refused, mut registered) = (0, None);
    while planted.elapsed() < std::time::Duration::from_secs(40) {
        let r = c
            .post_json(&format!("{base}/register"), &registration("after"), None)
            .await;
        match r.status {
            200 => {
                registered = Some(planted.elapsed());
                break;
            }
            503 => refused += 1,
            other => panic!("{other} {}", r.text()),
        }
    }
    let took = registered.expect("the residue was never broken");
    assert!(
        refused > 0,
        "the residue held nothing back: planted too late?"
    );
    assert!(
        took < std::time::Duration::from_secs(20),
        "the residue held the registry for {took:?} (30 s and more before)"
    );
    assert_eq!(redis.cli(0, &["GET", LOCK]).trim(), "0");
}
