//! `up`'s start-up report: each model's outcome as it comes ([`wait_for_models`]) and the
//! table of services printed in one piece once everything has started or failed.

use super::deploy::{Adopted, Deployments, Skipped};
use anyhow::Result;
use host_core::http::slot::ServerSlot;
use host_core::support::signals;
use host_core::support::stop;
use std::net::SocketAddr;
use std::sync::Arc;

/// The models as start-up left them.
pub(super) struct Models {
    /// Those serving, by name, for the app port's routes.
    pub(super) serving: Vec<(String, Arc<ServerSlot>)>,
    /// What a watched directory (and the admin API) needs to manage those serving later.
    pub(super) adopted: Vec<(Adopted, SocketAddr)>,
    /// Those that did not start, and why.
    pub(super) failed: Vec<Skipped>,
}

/// Waits for each model to register or fail, adding its row to `table`; `Stopped` if a stop
/// signal comes first.
pub(super) async fn wait_for_models(deployments: Deployments, table: &mut Table) -> Result<Models> {
    let mut models = Models {
        serving: Vec::new(),
        adopted: Vec::new(),
        failed: Vec::new(),
    };
    for starting in deployments.starting {
        let name = starting.name;
        match stop::unless(signals::wait(), starting.outcome).await? {
            Ok(Ok(addr)) => {
                table.row(&name, &format!("http://{addr}"), "registered");
                models.serving.push((name, starting.slot));
                models.adopted.extend(starting.adopt.map(|a| (a, addr)));
            }
            Ok(Err(why)) => {
                table.row(&name, "-", &format!("failed: {why}"));
                if let Some(a) = starting.adopt {
                    let source = a.source;
                    models.failed.push(Skipped { name, source, why });
                }
            }
            Err(_) => table.row(&name, "-", "stopped"),
        }
    }
    for skipped in deployments.skipped {
        table.row(
            &skipped.name,
            "-",
            &format!("not deployed: {}", skipped.why),
        );
        models.failed.push(skipped);
    }
    Ok(models)
}

/// `up`'s table of services, printed in one piece.
#[derive(Default)]
pub(super) struct Table {
    rows: Vec<String>,
}

impl Table {
    pub(super) fn row(&mut self, service: &str, url: &str, status: &str) {
        self.rows
            .push(format!("  {service:<24} {url:<32} {status}"));
    }

    pub(super) fn print(&self) {
        let mut out = format!("\n  {:<24} {:<32} status\n", "service", "url");
        for row in &self.rows {
            out.push_str(row);
            out.push('\n');
        }
        println!("{out}");
    }
}
