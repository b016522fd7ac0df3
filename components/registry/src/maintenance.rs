//! `POST /registry/maintenance/processes`: what the native host reports of the registered
//! processes (v1.2's process health monitoring). Only the host holds the route's token.

use crate::records::{Record, Registry};
use crate::settings::{maintenance_token, now_ms};
use guest_kit::http::{self, ApiRequest, Response};
use guest_kit::{ApiError, ErrorCode};
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProcessReport {
    /// Ports whose registered process the host found running.
    #[serde(default)]
    alive: Vec<PortProcess>,
    /// Ports whose registered process the host found gone.
    #[serde(default)]
    dead: Vec<PortProcess>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PortProcess {
    port: u16,
    process_id: u32,
}

/// `POST /registry/maintenance/processes`: the native host's process-health reports. Dead
/// processes' registrations are removed; live ones are marked `process_alive: true`. Only
/// a registration still held by the reported process is touched, so a report that arrives
/// after the port changed hands does no harm.
pub fn processes(req: &ApiRequest) -> Result<Response, ApiError> {
    let Some(secret) = maintenance_token()? else {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "the maintenance route is disabled",
        ));
    };
    match req.bearer_token() {
        None => {
            return Err(ApiError::new(
                ErrorCode::Unauthorized,
                "the maintenance route needs the host's `Authorization: Bearer` token",
            ));
        }
        Some(token) if token != secret => {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                "the maintenance route is for the host only",
            ));
        }
        Some(_) => {}
    }
    let report: ProcessReport = req.json()?;
    let reg = Registry::open()?;
    let now = now_ms();
    let held_by =
        |table: &registry_core::LeaseTable, p: &PortProcess| -> Result<Option<Record>, ApiError> {
            let Some(lease) = table.get(p.port).filter(|l| l.is_live(now)) else {
                return Ok(None);
            };
            Ok(reg
                .current_record(p.port, &lease)?
                .filter(|r| r.entry.process_id == p.process_id))
        };
    let removed = reg.with_leases(now, |table| {
        let mut removed = Vec::new();
        for p in &report.dead {
            if held_by(table, p)?.is_some() {
                table.release(p.port);
                removed.push(p.port);
            }
        }
        Ok(removed)
    })?;
    let table = reg.leases()?;
    let mut marked = 0;
    for p in &report.alive {
        if let Some(record) = held_by(&table, p)?
            && record.entry.process_alive != Some(true)
        {
            reg.update_record(p.port, &record.registration_id, |r| {
                r.entry.process_alive = Some(true)
            })?;
            marked += 1;
        }
    }
    Ok(http::json(
        200,
        &json!({"success": true, "removed": removed, "marked_alive": marked}),
    ))
}
