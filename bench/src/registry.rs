//! Registry load: registrations and unregistrations per second from many clients, with a
//! count of ports handed out twice, and operation latency as the number of active
//! registrations grows.

use super::load::Measured;
use super::peers::{self, Paths};
use super::report::{Report, ScalePoint, Throughput};
use super::section::Section;
use anyhow::{Context, Result, bail};
use edge_api::registry::{RegistrationRequest, RegistrationResponse};
use hyper::Method;
use service_client::HttpClient;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const SECTION: Section = Section {
    name: "registry",
    about: "registration throughput with 32 clients, and latency at 10 and 2,000 active registrations",
    run: |b, r| Box::pin(registry_figures(b.paths, b.duration, r)),
    targets,
    print,
};

struct Registry {
    client: HttpClient,
    base: String,
}

impl Registry {
    async fn register(&self, model: &str) -> Result<RegistrationResponse> {
        let request = RegistrationRequest {
            app_name: "bench".into(),
            app_version: edge_api::model::SPEC_VERSION.into(),
            model_name: model.into(),
            process_id: std::process::id(),
            preferred_port: None,
            reason: "edge-bench".into(),
            metadata: Default::default(),
        };
        let r = self
            .client
            .send(
                Method::POST,
                &format!("{}/register", self.base),
                Some(serde_json::to_vec(&request)?),
                None,
            )
            .await?;
        if r.status != 200 {
            bail!("register: {} {}", r.status, r.error_text());
        }
        r.json()
    }

    async fn unregister(&self, reg: &RegistrationResponse) -> Result<()> {
        let url = format!(
            "{}/unregister/{}?registration_id={}",
            self.base, reg.assigned_port, reg.registration_id
        );
        let r = self.client.send(Method::DELETE, &url, None, None).await?;
        if r.status != 200 {
            bail!("unregister: {} {}", r.status, r.error_text());
        }
        Ok(())
    }
}

fn registry(addr: SocketAddr) -> Arc<Registry> {
    Arc::new(Registry {
        client: HttpClient::new(Duration::from_secs(10)),
        base: format!("http://{addr}"),
    })
}

/// `clients` clients each register, then unregister, as fast as they can for `duration`.
pub async fn throughput(
    addr: SocketAddr,
    clients: usize,
    duration: Duration,
) -> Result<Throughput> {
    let reg = registry(addr);
    let held: Arc<Mutex<HashSet<u16>>> = Arc::default();
    let deadline = Instant::now() + duration;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (reg, held) = (reg.clone(), held.clone());
        tasks.push(tokio::spawn(async move {
            let (mut pairs, mut duplicates, mut errors) = (0u64, 0u64, 0u64);
            let name = format!("throughput-{c}");
            while Instant::now() < deadline {
                let Ok(r) = reg.register(&name).await else {
                    errors += 1;
                    continue;
                };
                if !held.lock().expect("not poisoned").insert(r.assigned_port) {
                    duplicates += 1;
                }
                // Released from our set before the registry frees it, so a port that moves
                // on to another client is never miscounted.
                held.lock().expect("not poisoned").remove(&r.assigned_port);
                match reg.unregister(&r).await {
                    Ok(()) => pairs += 1,
                    Err(_) => errors += 1,
                }
            }
            (pairs, duplicates, errors)
        }));
    }
    let (mut pairs, mut duplicates, mut errors) = (0, 0, 0);
    for t in tasks {
        let (p, d, e) = t.await.context("registry client panicked")?;
        pairs += p;
        duplicates += d;
        errors += e;
    }
    let secs = started.elapsed().as_secs_f64();
    Ok(Throughput {
        clients,
        registrations_per_s: pairs as f64 / secs,
        operations_per_s: 2.0 * pairs as f64 / secs,
        duplicate_ports: duplicates,
        errors,
    })
}

/// Holds `active` registrations, then times register and unregister from 4 clients for
/// `duration`.
pub async fn latency_at(addr: SocketAddr, active: usize, duration: Duration) -> Result<ScalePoint> {
    let reg = registry(addr);
    let mut fill = Vec::new();
    for f in 0..8 {
        let reg = reg.clone();
        fill.push(tokio::spawn(async move {
            for i in (f..active).step_by(8) {
                reg.register(&format!("resident-{i}")).await?;
            }
            anyhow::Ok(())
        }));
    }
    for f in fill {
        f.await??;
    }
    let deadline = Instant::now() + duration;
    let mut tasks = Vec::new();
    for c in 0..4 {
        let reg = reg.clone();
        tasks.push(tokio::spawn(async move {
            let (mut register, mut unregister) = (Measured::empty(), Measured::empty());
            let name = format!("probe-{c}");
            while Instant::now() < deadline {
                let t = Instant::now();
                let r = reg.register(&name).await?;
                register.record(t.elapsed());
                let t = Instant::now();
                reg.unregister(&r).await?;
                unregister.record(t.elapsed());
            }
            anyhow::Ok((register, unregister))
        }));
    }
    let (mut register, mut unregister) = (Measured::empty(), Measured::empty());
    for t in tasks {
        let (r, u) = t.await??;
        register.absorb(r);
        unregister.absorb(u);
    }
    register.elapsed = duration;
    unregister.elapsed = duration;
    Ok(ScalePoint {
        active_registrations: active,
        register: register.figures(),
        unregister: unregister.figures(),
    })
}

async fn registry_figures(paths: &Paths, duration: Duration, report: &mut Report) -> Result<()> {
    eprintln!("registry throughput, 32 clients ...");
    // The spec's range size (5100-5999): the lease table every operation rewrites is as
    // large as a default deployment's.
    let (reg, addr) = peers::registry(paths, "bench-registry", "30000-30899", &[]).await?;
    report.registry = Some(throughput(addr, 32, duration * 2).await?);
    reg.stop().await;
    for active in [10, 2000] {
        eprintln!("registry latency with {active} active registrations ...");
        let name = format!("scale-registry-{active}");
        let (reg, addr) = peers::registry(paths, &name, "30000-34999", &[]).await?;
        report
            .registry_scale
            .push(latency_at(addr, active, duration).await?);
        reg.stop().await;
    }
    Ok(())
}

/// Registrations per second without a duplicate port, and latency flat in the table's size.
fn targets(r: &mut Report) {
    if let Some(t) = r.registry.clone() {
        r.target(
            "registry registrations/s, 32 clients",
            ">= 2000/s, 0 duplicates",
            format!(
                "{:.0}/s, {} duplicates",
                t.registrations_per_s, t.duplicate_ports
            ),
            t.registrations_per_s >= 2000.0 && t.duplicate_ports == 0,
        );
    }
    if let [low, high] = r.registry_scale.as_slice() {
        let ratio = high.register.p50_ms / low.register.p50_ms.max(1e-9);
        let (a, b) = (low.active_registrations, high.active_registrations);
        r.target(
            &format!("registry latency {a} -> {b} active"),
            "within 2x",
            format!("register p50 x{ratio:.2}"),
            ratio <= 2.0,
        );
    }
}

fn print(r: &Report) {
    if let Some(t) = &r.registry {
        println!(
            "\nregistry, {} clients: {:.0} registrations/s ({:.0} operations/s), {} duplicate ports, {} errors",
            t.clients, t.registrations_per_s, t.operations_per_s, t.duplicate_ports, t.errors
        );
    }
    for p in &r.registry_scale {
        println!(
            "  {:>5} active: register p50 {:.2} ms p99 {:.2} ms; unregister p50 {:.2} ms p99 {:.2} ms",
            p.active_registrations,
            p.register.p50_ms,
            p.register.p99_ms,
            p.unregister.p50_ms,
            p.unregister.p99_ms
        );
    }
}
