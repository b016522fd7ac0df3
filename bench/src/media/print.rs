//! How section `media` prints: the served loads side by side, then the steps timed without
//! HTTP (natively, and as each server reports its own time).

use crate::report::{PredictRow, StepRow};

pub fn print(rows: &[PredictRow], steps: &[StepRow]) {
    if rows.is_empty() && steps.is_empty() {
        return;
    }
    println!("\npictures and sounds /predict (requests/s, p50 / p99 ms)");
    println!(
        "  {:<24} {:>5}  {:>24} {:>24}  {:>11}",
        "load", "conns", "runtime-host", "python", "host/python"
    );
    for row in rows {
        let cell = |side: &str| {
            row.side(side).map_or("-".to_owned(), |f| {
                format!("{:>8.0} {:>6.2}/{:<7.2}", f.rps, f.p50_ms, f.p99_ms)
            })
        };
        let ratio = match (row.side("host"), row.side("python")) {
            (Some(h), Some(p)) if p.rps > 0.0 => format!("{:.2}x", h.rps / p.rps),
            _ => "-".into(),
        };
        println!(
            "  {:<24} {:>5}  {:>24} {:>24}  {:>11}",
            row.property,
            row.connections,
            cell("host"),
            cell("python"),
            ratio
        );
    }
    if !steps.is_empty() {
        println!("\npictures and sounds, steps without the load generator (ms)");
        println!(
            "  {:<66} {:>5} {:>8} {:>8} {:>8}",
            "step", "runs", "p50", "p90", "min"
        );
    }
    for s in steps {
        println!(
            "  {:<66} {:>5} {:>8.3} {:>8.3} {:>8.3}",
            s.what, s.runs, s.p50_ms, s.p90_ms, s.min_ms
        );
    }
}
