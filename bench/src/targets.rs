//! The targets (issues 7, 11, 12 and 13), judged from a finished report.

use super::report::Report;

pub fn judge(r: &mut Report) {
    library(r);
    spin(r);
    oip(r);
    if let Some(half) = r.open_loop.iter().find(|o| o.share == 0.5).cloned() {
        let ratio = half.host.p99_ms / half.native.p99_ms.max(1e-9);
        r.target(
            "/predict logp p99 at 50 % of native's capacity",
            "host within 2x native (open loop)",
            format!(
                "{ratio:.2}x ({:.2} vs {:.2} ms)",
                half.host.p99_ms, half.native.p99_ms
            ),
            ratio <= 2.0 && half.host.errors == 0,
        );
    }
    for row in r.scrape.clone() {
        let ratio = row.scraped.rps / row.quiet.rps.max(1e-9);
        r.target(
            &format!("{}: scraped every 250 ms vs not", row.what),
            ">= 0.9x req/s (noise)",
            format!("{ratio:.3}x ({} scrapes)", row.scrapes),
            ratio >= 0.9 && row.scrapes > 0,
        );
    }
    if let Some(row) = r.stores.iter().find(|s| s.store == "redis").cloned() {
        let t = &row.registry;
        r.target(
            "registry on Redis, 32 clients",
            ">= 2,000 registrations/s, 0 dup",
            format!(
                "{:.0}/s, {} duplicates, {} errors",
                t.registrations_per_s, t.duplicate_ports, t.errors
            ),
            t.registrations_per_s >= 2000.0 && t.duplicate_ports == 0 && t.errors == 0,
        );
    }
    for prop in ["logp", "all"] {
        let found = r
            .predict
            .iter()
            .find(|p| p.property == prop && p.connections == 16)
            .cloned();
        let Some(row) = found else { continue };
        if let (Some(h), Some(py)) = (row.side("host"), row.side("python")) {
            let ratio = h.rps / py.rps.max(1e-9);
            r.target(
                &format!("{prop}: host vs Python at 16 conns"),
                ">= 10x req/s, lower p99",
                format!("{ratio:.1}x, p99 {:.2} vs {:.2} ms", h.p99_ms, py.p99_ms),
                ratio >= 10.0 && h.p99_ms < py.p99_ms,
            );
        }
        if let (Some(h), Some(n)) = (row.side("host"), row.side("native")) {
            let ratio = h.rps / n.rps.max(1e-9);
            r.target(
                &format!("{prop}: host vs native at 16 conns"),
                ">= 0.6x req/s (stretch 0.8x)",
                format!("{ratio:.2}x ({:.0} vs {:.0} req/s)", h.rps, n.rps),
                ratio >= 0.6,
            );
        }
    }
    let solubility = r
        .predict
        .iter()
        .find(|p| p.property == "logS" && p.connections == 16)
        .cloned();
    if let Some(fresh) = solubility.as_ref().and_then(|row| row.side("host-reuse1")) {
        // Issue 27: a fresh instance per request (Spin's model) starts from the snapshot.
        r.target(
            "solubility, --instance-reuse 1, 16 conns",
            ">= 3,000 req/s",
            format!("{:.0} req/s", fresh.rps),
            fresh.rps >= 3000.0,
        );
    }
    if let Some(row) = solubility
        && let (Some(h), Some(py)) = (row.side("host"), row.side("python"))
    {
        let ratio = h.rps / py.rps.max(1e-9);
        r.target(
            "solubility: host vs Python ONNX peer, 16 conns",
            ">= 5x req/s, lower p99",
            format!("{ratio:.1}x, p99 {:.2} vs {:.2} ms", h.p99_ms, py.p99_ms),
            ratio >= 5.0 && h.p99_ms < py.p99_ms,
        );
    }
    let singles = r
        .embeddings
        .iter()
        .find(|e| e.texts_per_request == 1 && e.connections == 16)
        .cloned();
    if let Some(row) = singles
        && let (Some(h), Some(py)) = (row.per_second("host"), row.per_second("python"))
    {
        let ratio = h / py.max(1e-9);
        r.target(
            "embeddings: host vs Python, 16 conns",
            ">= 2x sentences/s",
            format!("{ratio:.1}x ({h:.0} vs {py:.0} sentences/s)"),
            ratio >= 2.0,
        );
    }
    if let Some((label, _, mib)) = r
        .up_rss_mib
        .iter()
        .find(|(label, _, _)| label.contains("minilm"))
        .cloned()
    {
        let mb = mib * 1.048_576;
        r.target(
            &format!("`up` with {label}"),
            "< 300 MB RSS",
            format!("{mb:.0} MB (with registry and chat)"),
            mb < 300.0,
        );
    }
    if let Some((_, h)) = r.health.iter().find(|(s, _)| s == "host").cloned() {
        r.target(
            "/health p99 at 64 conns",
            "< 2 ms",
            format!("{:.2} ms", h.p99_ms),
            h.p99_ms < 2.0,
        );
    }
    if let Some(w) = r.startup_warm_ms {
        r.target(
            "warm start to healthy",
            "< 500 ms",
            format!("{w:.0} ms"),
            w < 500.0,
        );
    }
    for (label, _, mib) in r.up_rss_mib.clone().iter().filter(|(_, n, _)| *n == 25) {
        let mb = mib * 1.048_576;
        r.target(
            &format!("25 models in one `up` ({label})"),
            "< 150 MB RSS",
            format!("{mb:.0} MB (with registry and chat)"),
            mb < 150.0,
        );
    }
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

/// Issue 25 §4: the file through `predict` against the native loop and the Python scripts,
/// and `predict`'s memory flat in the file's size.
fn library(r: &mut Report) {
    let Some(rows) = r.library.iter().map(|l| l.rows).max() else {
        return;
    };
    let rate = |r: &Report, model: &str, side: &str| {
        r.library_row(model, side, rows).map(|l| l.rows_per_s)
    };
    if let (Some(h), Some(n)) = (rate(r, "logp", "host"), rate(r, "logp", "native")) {
        let ratio = h / n;
        r.target(
            &format!("library logp: predict vs native, {rows}"),
            ">= 0.8x molecules/s",
            format!("{ratio:.2}x ({h:.0} vs {n:.0}/s)"),
            ratio >= 0.8,
        );
    }
    for model in ["logp", "solubility"] {
        if let (Some(h), Some(py)) = (rate(r, model, "host"), rate(r, model, "python")) {
            let ratio = h / py;
            r.target(
                &format!("library {model}: predict vs Python script"),
                ">= 5x molecules/s",
                format!("{ratio:.1}x ({h:.0} vs {py:.0}/s)"),
                ratio >= 5.0,
            );
        }
    }
    let peak = |n: usize| {
        r.library_row("logp", "host", n)
            .and_then(|l| l.peak_rss_mib)
    };
    if let (Some(small), Some(whole)) = (peak(rows / 5), peak(rows)) {
        r.target(
            "library: predict's memory, 1/5 -> whole file",
            "flat (within 1.25x)",
            format!("{small:.1} -> {whole:.1} MiB"),
            whole <= small * 1.25,
        );
    }
}

/// Issue 47 §3: solubility's snapshot under Spin, 16 connections.
fn spin(r: &mut Report) {
    let goals = [
        ("/health", "spin-sqlite", 4000.0),
        ("/health", "spin-redis", 4000.0),
        ("/predict", "spin-sqlite", 1000.0),
        ("/predict", "spin-redis", 2000.0),
    ];
    for (endpoint, side, goal) in goals {
        let found = r
            .spin
            .iter()
            .find(|row| row.property == endpoint)
            .and_then(|row| row.side(side))
            .map(|f| f.rps);
        if let Some(rps) = found {
            r.target(
                &format!("Spin {endpoint}, {side}, 16 conns"),
                &format!(">= {goal:.0} req/s"),
                format!("{rps:.0} req/s"),
                rps >= goal,
            );
        }
    }
}

/// The targets: at 16 connections, each protocol side within 0.9x of v1.2 (molprop and
/// solubility); and minilm's binary as fast as its JSON, within noise.
fn oip(report: &mut Report) {
    for row in report.oip.clone() {
        if row.connections != 16 {
            continue;
        }
        let (Some(v12), Some(json), Some(binary)) = (
            row.side("v1.2"),
            row.side("oip-json"),
            row.side("oip-binary"),
        ) else {
            continue;
        };
        let errors = v12.errors + json.errors + binary.errors;
        if row.load.starts_with("minilm") {
            let ratio = binary.rps / json.rps.max(1e-9);
            report.target(
                &format!("{}: /v2 binary vs JSON, 16 conns", row.load),
                ">= 0.95x req/s (the network dominates), 0 errors",
                format!(
                    "{ratio:.2}x ({:.0} vs {:.0}/s), {errors} errors",
                    binary.rps, json.rps
                ),
                ratio >= 0.95 && errors == 0,
            );
            continue;
        }
        for (side, f) in [("JSON", json), ("binary", binary)] {
            let ratio = f.rps / v12.rps.max(1e-9);
            report.target(
                &format!("{}: /v2 infer {side} vs /predict, 16 conns", row.load),
                ">= 0.9x req/s, 0 errors",
                format!(
                    "{ratio:.2}x ({:.0} vs {:.0}/s), {errors} errors",
                    f.rps, v12.rps
                ),
                ratio >= 0.9 && errors == 0,
            );
        }
    }
}
