//! Section `startup`: how long `runtime-host model` takes from exec to registered and
//! healthy, cold and warm.

use super::peers::{self, ModelUnderTest, Paths};
use super::procs;
use super::report::Report;
use super::section::Section;
use anyhow::Result;

pub const SECTION: Section = Section {
    name: "startup",
    about: "exec of `runtime-host model` to registered and healthy, cold and warm",
    run: |b, r| Box::pin(startup(b.paths, r)),
    targets,
    print,
};

/// Exec of `runtime-host model` to registered and healthy: once with an empty data
/// directory (no compilation cache), then five times with the cache warm.
pub async fn startup(paths: &Paths, report: &mut Report) -> Result<()> {
    eprintln!("start-up, cold and warm ...");
    let (reg, reg_addr) = peers::registry(paths, "startup-registry", "22100-22199", &[]).await?;
    let data = procs::fresh_dir(&paths.work, "startup-model")?;
    let molprop = ModelUnderTest::molprop(paths)?;
    let mut times = Vec::new();
    for _ in 0..6 {
        let (model, _, took) =
            peers::host_model(paths, "startup-model", &molprop, reg_addr, &data, &[]).await?;
        times.push(took.as_secs_f64() * 1000.0);
        model.stop().await;
    }
    report.startup_cold_ms = Some(times[0]);
    let mut warm = times[1..].to_vec();
    warm.sort_by(f64::total_cmp);
    report.startup_warm_ms = Some(warm[warm.len() / 2]);
    reg.stop().await;
    Ok(())
}

/// A warm start within half a second.
fn targets(r: &mut Report) {
    if let Some(w) = r.startup_warm_ms {
        r.target(
            "warm start to healthy",
            "< 500 ms",
            format!("{w:.0} ms"),
            w < 500.0,
        );
    }
}

fn print(r: &Report) {
    if let (Some(c), Some(w)) = (r.startup_cold_ms, r.startup_warm_ms) {
        println!(
            "\nstart-up, exec of `runtime-host model` to registered and healthy: cold {c:.0} ms, warm {w:.0} ms (median)"
        );
    }
}
