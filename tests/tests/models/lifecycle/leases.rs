//! Heartbeats: leases renewed, a forgotten registration renewed on the same port, and a short
//! lease followed so the model never drops out.

use super::{eventually, listing, model, registry};
use e2e_tests::{Client, HostBuilder, temp_dir};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread")]
async fn heartbeats_renew_and_a_forgotten_registration_is_renewed_on_the_same_port() {
    let (rdir, mdir) = (temp_dir(), temp_dir());
    let c = Client::new();
    {
        let (reg, _) = registry(rdir.path(), &["--ttl", "5"]);
        let m = model(
            mdir.path(),
            &reg.base_url(),
            &["--heartbeat-interval", "300ms"],
        )
        .start();
        let first = listing(&c, &reg).await.registrations[0]
            .last_heartbeat
            .clone();
        eventually("last_heartbeat moves", Duration::from_secs(5), || {
            let (c, reg, first) = (c.clone(), &reg, first.clone());
            async move {
                listing(&c, reg)
                    .await
                    .registrations
                    .first()
                    .is_some_and(|r| r.last_heartbeat > first)
            }
        })
        .await;
        drop(m);
    }
    // The registry forgets the model (it is replaced by one with empty data on the same
    // address): the model's next heartbeat is refused, and it registers again on its port.
    let (rdir2, rdir3, mdir2) = (temp_dir(), temp_dir(), temp_dir());
    let first_port = e2e_tests::port_block(5);
    let ports = format!("{first_port}-{}", first_port + 4);
    let listen = format!("127.0.0.1:{}", e2e_tests::free_port());
    let forgetful = |dir: &std::path::Path| {
        HostBuilder::registry(dir)
            .listen_on(&listen)
            .arg("--ports")
            .arg(ports.clone())
            .start()
    };
    let reg = forgetful(rdir2.path());
    let m = model(
        mdir2.path(),
        &reg.base_url(),
        &["--heartbeat-interval", "500ms"],
    )
    .start();
    let (port, pid) = (m.addr.port(), m.pid());
    reg.kill9();
    let reg = forgetful(rdir3.path());
    assert_eq!(
        listing(&c, &reg).await.count,
        0,
        "the new registry starts empty"
    );
    eventually("registered again", Duration::from_secs(10), || {
        let (c, reg) = (c.clone(), &reg);
        async move {
            listing(&c, reg)
                .await
                .registrations
                .first()
                .is_some_and(|r| r.port == port && r.process_id == pid)
        }
    })
    .await;
    assert!(m.output().contains("registered again"), "{}", m.output());
}

#[tokio::test(flavor = "multi_thread")]
async fn heartbeats_follow_a_short_lease_so_the_model_never_drops_out() {
    let (rdir, mdir) = (temp_dir(), temp_dir());
    // A 3 s lease, and the model left at its default 30 s heartbeat interval: it must
    // heartbeat within the lease the registry granted, not on its own schedule.
    let (reg, first) = registry(rdir.path(), &["--ttl", "3"]);
    let m = model(mdir.path(), &reg.base_url(), &[]).start();
    assert_eq!(m.addr.port(), first);
    let c = Client::new();
    let mut heartbeats = std::collections::BTreeSet::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(15) {
        let list = listing(&c, &reg).await;
        let entry = list
            .registrations
            .iter()
            .find(|r| r.process_id == m.pid())
            .unwrap_or_else(|| {
                panic!(
                    "the model dropped out of /registry after {:?}",
                    start.elapsed()
                )
            });
        assert_eq!(entry.port, first);
        heartbeats.insert(entry.last_heartbeat.clone());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(
        heartbeats.len() >= 8,
        "last_heartbeat keeps moving (about one a second): {heartbeats:?}"
    );
    // Quiet logs: the host's own heartbeats are DEBUG, requests from outside stay INFO.
    let log = reg.output();
    assert!(
        log.lines()
            .any(|l| l.contains("INFO") && l.contains("path=\"/registry\"")),
        "outside requests are logged:\n{log}"
    );
    assert!(
        !log.contains("path=\"/heartbeat/"),
        "heartbeats from the model host are not logged at INFO:\n{log}"
    );
}
