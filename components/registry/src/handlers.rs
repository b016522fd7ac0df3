//! The registry's endpoints.

use crate::caller::identity;
use crate::records::{Record, Registry, record_key};
use crate::settings::{ms_to_time, now_ms};
use edge_api::registry::{
    HeartbeatRequest, HeartbeatResponse, RegistrationRequest, RegistrationResponse, RegistryEntry,
    RegistryListing, UnregistrationResponse,
};
use edge_api::time::iso8601_no_zone;
use guest_kit::http::{self, ApiRequest, Response};
use guest_kit::{ApiError, ErrorCode};
use registry_core::{Assignment, Lease, owner_hash, parse_id, validate};
use uuid::Uuid;

fn ts(ms: u64) -> String {
    iso8601_no_zone(ms_to_time(ms))
}

fn not_registered(port: u16) -> ApiError {
    ApiError::new(
        ErrorCode::NotRegistered,
        format!("port {port} has no live registration"),
    )
}

fn mismatch(port: u16) -> ApiError {
    ApiError::new(
        ErrorCode::RegistrationMismatch,
        format!("registration_id does not match the registration on port {port}"),
    )
}

/// The live lease on `port` and the registration holding it, or 404 `not_registered`.
fn held(
    reg: &Registry,
    table: &registry_core::LeaseTable,
    port: u16,
    now: u64,
) -> Result<(Lease, Record), ApiError> {
    let lease = table
        .get(port)
        .filter(|l| l.is_live(now))
        .ok_or_else(|| not_registered(port))?;
    let record = reg
        .current_record(port, &lease)?
        .ok_or_else(|| not_registered(port))?;
    Ok((lease, record))
}

/// What a registration ended up as.
enum Granted {
    /// The same process registered the same model again: its existing lease, renewed.
    Existing { port: u16, registration_id: String },
    /// A new lease on `port`.
    New { port: u16, message: String },
}

/// `POST /register`. Who may register which process, and who gets a registration id back,
/// is [`registry_core::caller::Identity`]'s business.
pub fn register(req: &ApiRequest) -> Result<Response, ApiError> {
    let body: RegistrationRequest = req.json()?;
    let warning = validate::registration(&body)?;
    let identity = identity(req)?;
    identity.may_register(body.process_id)?;
    let holder = identity.holder(body.process_id);
    let user = identity.user();
    let reg = Registry::open()?;
    let now = now_ms();
    check_holder_limit(&reg, &holder, user.as_deref(), now)?;
    let expires = now + reg.settings.ttl_ms();
    let owner = owner_hash(body.process_id, &body.app_name, &body.model_name);

    let id = Uuid::new_v4();
    let granted = reg.with_leases(now, |table| {
        // A retry from the same process (its answer was lost, say) gets its lease back. The
        // table alone identifies it, so even a retry racing the first request's record write
        // is recognised; a written record that names someone else means a hash collision.
        for port in table.owned_by(owner, now) {
            let lease = table.get(port).expect("owned ports are in range");
            let same = match reg.current_record(port, &lease)? {
                Some(r) => {
                    r.entry.process_id == body.process_id
                        && r.entry.app_name == body.app_name
                        && r.entry.model_name == body.model_name
                }
                None => true,
            };
            if same && !identity.is_related_to(body.process_id) {
                // A registration id is a secret: only the registering process gets it back.
                return Err(ApiError::new(
                    ErrorCode::AlreadyExists,
                    format!(
                        "this process_id, app_name and model_name are already registered on \
                         port {port}; its registration_id went to the process that registered. \
                         Renew with POST /heartbeat/{port} and that id, or unregister with it"
                    ),
                ));
            }
            if same {
                table.set(
                    port,
                    Lease {
                        expires_at_ms: expires,
                        ..lease
                    },
                );
                let registration_id = Uuid::from_u128(lease.id).hyphenated().to_string();
                return Ok(Granted::Existing {
                    port,
                    registration_id,
                });
            }
        }
        match table.choose(body.preferred_port, now) {
            Assignment::Exhausted => Err(ApiError::new(
                ErrorCode::NoPortsAvailable,
                format!(
                    "every port of {} is taken; retry when one is freed",
                    table.range()
                ),
            )),
            Assignment::Port { port, message } => {
                table.set(
                    port,
                    Lease {
                        expires_at_ms: expires,
                        owner,
                        id: id.as_u128(),
                    },
                );
                Ok(Granted::New { port, message })
            }
        }
    })?;

    let (port, registration_id, mut message) = match granted {
        Granted::Existing {
            port,
            registration_id,
        } => {
            // What the process says of itself now replaces what it said before (a model
            // upgraded in place reports its new version this way); who and where stay.
            reg.update_record(port, &registration_id, |r| {
                r.entry.last_heartbeat = ts(now);
                r.entry.expires_at = ts(expires);
                r.entry.app_version = body.app_version.clone();
                r.entry.reason = body.reason.clone();
                r.entry.metadata = body.metadata.clone();
            })?;
            let msg = format!("already registered on port {port}; registration renewed");
            (port, registration_id, msg)
        }
        Granted::New { port, message } => {
            let registration_id = id.hyphenated().to_string();
            let record = Record {
                registration_id: registration_id.clone(),
                holder: Some(holder),
                user,
                entry: RegistryEntry {
                    port,
                    app_name: body.app_name,
                    app_version: body.app_version,
                    model_name: body.model_name,
                    process_id: body.process_id,
                    reason: body.reason,
                    metadata: body.metadata,
                    registered_at: ts(now),
                    last_heartbeat: ts(now),
                    expires_at: ts(expires),
                    process_alive: None,
                },
            };
            // In turn with `update_record`: a late heartbeat of the port's previous holder
            // must not land in the middle and overwrite this record.
            reg.store.put_json(&record_key(port), &record)?;
            (port, registration_id, message)
        }
    };
    if let Some(w) = warning {
        message = format!("{message}; {w}");
    }
    Ok(http::json(
        200,
        &RegistrationResponse {
            success: true,
            assigned_port: port,
            registration_id,
            message,
            expires_at: ts(expires),
        },
    ))
}

/// `POST /heartbeat/{port}`: renews the lease. A `registration_id` in the body must match;
/// without one, only the registered process may renew (as the native host tells).
pub fn heartbeat(req: &ApiRequest, port: u16) -> Result<Response, ApiError> {
    let body: HeartbeatRequest = if req.body.iter().all(u8::is_ascii_whitespace) {
        HeartbeatRequest::default()
    } else {
        req.json()?
    };
    let identity = identity(req)?;
    let reg = Registry::open()?;
    let now = now_ms();
    let expires = now + reg.settings.ttl_ms();
    // Who may renew, checked first on what the store holds now without the lock (a stranger's
    // heartbeat costs no lock: see `unregister`), then again under it.
    let may_renew = |table: &registry_core::LeaseTable| -> Result<(Lease, Record), ApiError> {
        let (lease, record) = held(&reg, table, port, now)?;
        match &body.registration_id {
            Some(id) if *id != record.registration_id => return Err(mismatch(port)),
            Some(_) => {}
            // Without the id, only the registered process itself (or its family) may renew.
            None if identity.is_related_to(record.entry.process_id) => {}
            None => {
                return Err(ApiError::new(
                    ErrorCode::Forbidden,
                    format!(
                        "a heartbeat without registration_id is accepted only from the \
                         process registered on port {port}; send {{\"registration_id\": ...}}"
                    ),
                ));
            }
        }
        Ok((lease, record))
    };
    may_renew(&reg.leases()?)?;
    let record = reg.with_leases(now, |table| {
        let (lease, record) = may_renew(table)?;
        table.set(
            port,
            Lease {
                expires_at_ms: expires,
                ..lease
            },
        );
        Ok(record)
    })?;
    reg.update_record(port, &record.registration_id, |r| {
        r.entry.last_heartbeat = ts(now);
        r.entry.expires_at = ts(expires);
    })?;
    Ok(http::json(
        200,
        &HeartbeatResponse {
            success: true,
            port,
            last_heartbeat: ts(now),
            expires_at: ts(expires),
        },
    ))
}

/// `DELETE /unregister/{port}?registration_id=`.
pub fn unregister(req: &ApiRequest, port: u16) -> Result<Response, ApiError> {
    let id = req.required_query("registration_id", "registration_id")?;
    let reg = Registry::open()?;
    let now = now_ms();
    // The lease alone says who holds the port (it carries the registration id), so the
    // check needs no other read while the table is being changed.
    let may_release = |table: &registry_core::LeaseTable| -> Result<(), ApiError> {
        let lease = table
            .get(port)
            .filter(|l| l.is_live(now))
            .ok_or_else(|| not_registered(port))?;
        if parse_id(&id) != Some(lease.id) {
            return Err(mismatch(port));
        }
        Ok(())
    };
    // Checked first on the table as it is, without the lock: under Spin on Redis every change
    // of the table holds one lock for the whole registry, and a stranger guessing ids must
    // not hold it (64 of them cut real registrations tenfold). A wrong id is refused here;
    // the right one is checked again under the lock, where the table may have changed.
    may_release(&reg.leases()?)?;
    reg.with_leases(now, |table| {
        may_release(table)?;
        table.release(port);
        Ok(())
    })?;
    Ok(http::json(
        200,
        &UnregistrationResponse {
            success: true,
            message: format!("unregistered; port {port} is free"),
            freed_port: port,
        },
    ))
}

/// Refuses a registration that would give `holder` more than `registry_max_per_process`
/// live registrations, or its local `user` more than `registry_max_per_user`. Counted before
/// the lease table is changed (and so before its lock is taken), so concurrent requests of
/// one holder may pass a limit by as many as run at once.
fn check_holder_limit(
    reg: &Registry,
    holder: &str,
    user: Option<&str>,
    now: u64,
) -> Result<(), ApiError> {
    let per_process = reg.settings.max_per_process;
    let per_user = user.and(Some(reg.settings.max_per_user)).unwrap_or(0);
    let Some(lowest) = [per_process, per_user].into_iter().filter(|&n| n > 0).min() else {
        return Ok(());
    };
    let table = reg.leases()?;
    let live: Vec<(u16, Lease)> = table.live(now).collect();
    if live.len() < lowest {
        return Ok(());
    }
    let records = held_records(reg, live)?;
    let count = |of: &dyn Fn(&Record) -> bool| records.iter().filter(|(_, r)| of(r)).count();
    let held = count(&|r| r.holder() == holder);
    if per_process > 0 && held >= per_process {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            format!(
                "{} already holds {held} registrations, the most one may hold \
                 (registry_max_per_process); unregister some first",
                holder.replace(':', " ")
            ),
        ));
    }
    if let Some(user) = user.filter(|_| per_user > 0) {
        let held = count(&|r| r.user.as_deref() == Some(user));
        if held >= per_user {
            return Err(ApiError::new(
                ErrorCode::Forbidden,
                format!(
                    "user {} already holds {held} registrations on this machine, the most one \
                     user may hold ({per_user}, registry_max_per_user: runtime-host \
                     --max-per-user), whatever processes they come from; unregister some first",
                    user.replace(':', " ")
                ),
            ));
        }
    }
    Ok(())
}

/// The records of the `live` leases that still hold them, read in one store call.
fn held_records(reg: &Registry, live: Vec<(u16, Lease)>) -> Result<Vec<(Lease, Record)>, ApiError> {
    let keys: Vec<String> = live.iter().map(|(p, _)| record_key(*p)).collect();
    let mut records: std::collections::HashMap<String, Record> =
        reg.store.get_many_json(&keys)?.into_iter().collect();
    Ok(live
        .into_iter()
        .filter_map(|(port, lease)| {
            let record = records.remove(&record_key(port))?;
            record.holds(&lease).then_some((lease, record))
        })
        .collect())
}

/// The live registrations, by port (never with their ids).
fn live_entries(reg: &Registry, now: u64) -> Result<Vec<RegistryEntry>, ApiError> {
    let live: Vec<(u16, Lease)> = reg.leases()?.live(now).collect();
    Ok(held_records(reg, live)?
        .into_iter()
        .map(|(lease, record)| {
            let mut entry = record.entry;
            entry.expires_at = ts(lease.expires_at_ms);
            entry
        })
        .collect())
}

/// `GET /registry`.
pub fn list() -> Result<Response, ApiError> {
    let reg = Registry::open()?;
    let registrations = live_entries(&reg, now_ms())?;
    Ok(http::json(
        200,
        &RegistryListing {
            success: true,
            count: registrations.len(),
            registrations,
        },
    ))
}
