//! Section `startup`: how long `runtime-host model` takes from exec to registered and
//! healthy, cold and warm.

use super::peers::{self, ModelUnderTest, Paths};
use super::procs;
use super::report::Report;
use anyhow::Result;

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
