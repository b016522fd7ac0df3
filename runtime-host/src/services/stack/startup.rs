//! The stack's start-up report: each model's outcome as it comes ([`wait_for_models`]) and
//! the table of services, printed in one piece once everything has started or failed.

use crate::services::deployments::at_start::{AdoptedModel, Deployments, LeftOutModel};
use anyhow::Result;
use host_core::http::slot::ServerSlot;
use host_core::support::log_writer::{self, LogFormat};
use host_core::support::signals;
use host_core::support::stop;
use std::net::SocketAddr;
use std::sync::Arc;

/// The models as start-up left them.
pub(super) struct ModelOutcomes {
    /// Those serving, by name, for the app port's routes.
    pub(super) serving: Vec<(String, Arc<ServerSlot>)>,
    /// What a watched directory (and the admin API) needs to manage those serving later.
    pub(super) adopted: Vec<(AdoptedModel, SocketAddr)>,
    /// Those that did not start, and why.
    pub(super) failed: Vec<LeftOutModel>,
}

/// Waits for each model to register or fail, adding its row to `table`; `Stopped` if a stop
/// signal comes first.
pub(super) async fn wait_for_models(
    deployments: Deployments,
    table: &mut StartupTable,
) -> Result<ModelOutcomes> {
    let mut models = ModelOutcomes {
        serving: Vec::new(),
        adopted: Vec::new(),
        failed: Vec::new(),
    };
    for started in deployments.starting {
        let (starting, adoption) = (started.starting, started.adoption);
        let name = starting.name;
        match stop::unless(signals::wait(), starting.outcome).await? {
            Ok(Ok(addr)) => {
                table.row(&name, &format!("http://{addr}"), "registered");
                models.serving.push((name, starting.slot));
                models.adopted.push((adoption, addr));
            }
            Ok(Err(why)) => {
                table.row(&name, "-", &format!("failed: {why}"));
                let (source, origin) = (adoption.source, adoption.origin);
                models.failed.push(LeftOutModel {
                    name,
                    source,
                    origin,
                    why,
                });
            }
            Err(_) => table.row(&name, "-", "stopped"),
        }
    }
    for left_out in deployments.left_out {
        table.row(
            &left_out.name,
            "-",
            &format!("not deployed: {}", left_out.why),
        );
        models.failed.push(left_out);
    }
    Ok(models)
}

/// The stack's table of services, printed in one piece.
#[derive(Default)]
pub struct StartupTable {
    rows: Vec<String>,
}

impl StartupTable {
    /// A service's row. With `--log-format json` it is also a log line (target `startup`),
    /// so a log pipeline sees what the table on standard output shows people.
    pub fn row(&mut self, service: &str, url: &str, status: &str) {
        if log_writer::format() == LogFormat::Json {
            tracing::info!(target: "startup", service, url, status, "service started");
        }
        self.rows
            .push(format!("  {service:<24} {url:<32} {status}"));
    }
}

impl std::fmt::Display for StartupTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "\n  {:<24} {:<32} status", "service", "url")?;
        for row in &self.rows {
            writeln!(f, "{row}")?;
        }
        Ok(())
    }
}
