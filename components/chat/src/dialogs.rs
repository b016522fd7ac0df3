//! Dialog records in the key-value store.
//!
//! Layout (store `default`):
//! - `chat/dialog/<id>`: the [`Dialog`] as JSON, the single source of truth;
//! - `chat/guid/<GUID>`: the dialog id, so `/api/dialog?id=` also accepts the GUID.
//!
//! Every change to a dialog is a compare-and-swap on its record, so concurrent appends never
//! lose or duplicate a message, and `numMessages` is always derived from the messages.

use crate::auth::require_admin;
use edge_api::chat::{self, Dialog, NewDialog, NewMessage};
use edge_api::time::now_rfc3339;
use guest_kit::http::{self, ApiRequest, Response};
use guest_kit::kv::{Change, Store};
use guest_kit::{ApiError, ErrorCode};
use serde_json::json;
use uuid::Uuid;

const DIALOG_PREFIX: &str = "chat/dialog/";
const GUID_PREFIX: &str = "chat/guid/";

fn dialog_key(id: &str) -> String {
    format!("{DIALOG_PREFIX}{id}")
}

fn guid_key(guid: &Uuid) -> String {
    format!("{GUID_PREFIX}{}", guid.hyphenated())
}

fn dialog_not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("dialog not found: no dialog has id or GUID `{id}`"))
}

/// A fresh short dialog id: 12 hex digits of randomness.
fn new_dialog_id() -> String {
    Uuid::new_v4().simple().to_string()[..12].to_owned()
}

/// `GET /api/chats`: every dialog's summary, most recently updated first.
pub fn list() -> Result<Response, ApiError> {
    let store = Store::open_default()?;
    let keys = store.keys_with_prefix(DIALOG_PREFIX)?;
    let mut summaries: Vec<_> = store
        .get_many_json::<Dialog>(&keys)?
        .into_iter()
        .map(|(_, d)| d.summary())
        .collect();
    chat::sort_summaries(&mut summaries);
    Ok(http::json(200, &summaries))
}

/// Finds the dialog id behind an `id` query value, which may be the id or the GUID.
fn resolve_id(store: &Store, given: &str) -> Result<Option<String>, ApiError> {
    if store.exists(&dialog_key(given))? {
        return Ok(Some(given.to_owned()));
    }
    match Uuid::try_parse(given) {
        Ok(guid) => store.get_json::<String>(&guid_key(&guid)),
        Err(_) => Ok(None),
    }
}

fn load(store: &Store, given: &str) -> Result<Dialog, ApiError> {
    let id = resolve_id(store, given)?.ok_or_else(|| dialog_not_found(given))?;
    store
        .get_json::<Dialog>(&dialog_key(&id))?
        .ok_or_else(|| dialog_not_found(given))
}

/// `GET /api/dialog?id=`.
pub fn get(req: &ApiRequest) -> Result<Response, ApiError> {
    let given = req.required_query("id", "dialog id")?;
    let store = Store::open_default()?;
    Ok(http::json(200, &load(&store, &given)?))
}

/// `POST /api/chats`: creates a dialog (optionally with its id, GUID, dates and messages, as
/// an export carries them).
pub fn create(req: &ApiRequest) -> Result<Response, ApiError> {
    require_admin(req)?;
    let input: NewDialog = req.json()?;
    let now = now_rfc3339();
    let chat_name = chat::validate_chat_name(&input.chat_name)?;
    if let Some(id) = &input.id {
        chat::validate_id("id", id)?;
    }
    let guid = match &input.guid {
        Some(g) => Uuid::try_parse(g).map_err(|_| ApiError::invalid("GUID", "must be a UUID"))?,
        None => Uuid::new_v4(),
    };
    let created = chat::validate_timestamp("created", input.created.as_deref())?
        .unwrap_or_else(|| now.clone());
    let updated = chat::validate_timestamp("updated", input.updated.as_deref())?
        .unwrap_or_else(|| now.clone());
    if input.messages.len() > chat::MAX_MESSAGES_PER_DIALOG {
        return Err(ApiError::invalid(
            "messages",
            format!(
                "at most {} messages per dialog",
                chat::MAX_MESSAGES_PER_DIALOG
            ),
        ));
    }
    let mut messages = Vec::with_capacity(input.messages.len());
    for (i, m) in input.messages.into_iter().enumerate() {
        let field = format!("messages[{i}]");
        let message = m.into_message(&field, || Uuid::new_v4().to_string(), &now)?;
        if messages
            .iter()
            .any(|old: &chat::Message| old.id == message.id)
        {
            return Err(ApiError::invalid(
                &format!("{field}.id"),
                "duplicate message id",
            ));
        }
        messages.push(message);
    }

    let store = Store::open_default()?;
    claim_guid(&store, &guid)?;
    let mut dialog = Dialog {
        id: input.id.clone().unwrap_or_else(new_dialog_id),
        chat_name,
        messages,
        created,
        updated,
        guid: guid.hyphenated().to_string(),
    };
    // A generated id may (very rarely) collide; a client-chosen one must not.
    let attempts = if input.id.is_some() { 1 } else { 8 };
    let mut stored = false;
    for _ in 0..attempts {
        let record = dialog.clone();
        stored = store.update(&dialog_key(&dialog.id), |current: Option<Dialog>| {
            Ok(match current {
                Some(_) => (Change::Keep, false),
                None => (Change::Put(record.clone()), true),
            })
        })?;
        if stored {
            break;
        }
        dialog.id = new_dialog_id();
    }
    if !stored {
        store.delete(&guid_key(&guid))?;
        return Err(ApiError::new(
            ErrorCode::AlreadyExists,
            format!("a dialog with id `{}` already exists", dialog.id),
        ));
    }
    store.set_json(&guid_key(&guid), &dialog.id)?;
    let mut resp = http::json(201, &dialog);
    resp.set_header("location", format!("/api/dialog?id={}", dialog.id));
    Ok(resp)
}

/// Reserves a GUID for a new dialog (409 if a live dialog already has it). The index entry
/// is written as `""` first and pointed at the dialog once that is stored.
fn claim_guid(store: &Store, guid: &Uuid) -> Result<(), ApiError> {
    let key = guid_key(guid);
    let claimed = store.update(&key, |current: Option<String>| {
        Ok(match current {
            // An entry whose dialog is gone is stale (e.g. a crash between the two writes).
            Some(id) if !id.is_empty() && store.exists(&dialog_key(&id))? => (Change::Keep, false),
            _ => (Change::Put(String::new()), true),
        })
    })?;
    if claimed {
        Ok(())
    } else {
        Err(ApiError::new(
            ErrorCode::AlreadyExists,
            format!("a dialog with GUID `{guid}` already exists"),
        ))
    }
}

/// `POST /api/dialog/messages?id=`: appends one message.
pub fn append(req: &ApiRequest) -> Result<Response, ApiError> {
    require_admin(req)?;
    let given = req.required_query("id", "dialog id")?;
    let input: NewMessage = req.json()?;
    let now = now_rfc3339();
    let message = input.into_message("message", || Uuid::new_v4().to_string(), &now)?;
    let store = Store::open_default()?;
    let id = resolve_id(&store, &given)?.ok_or_else(|| dialog_not_found(&given))?;
    store.update(&dialog_key(&id), |current: Option<Dialog>| {
        let mut dialog = current.ok_or_else(|| dialog_not_found(&given))?;
        if dialog.messages.iter().any(|m| m.id == message.id) {
            return Err(ApiError::new(
                ErrorCode::AlreadyExists,
                format!(
                    "dialog `{id}` already has a message with id `{}`",
                    message.id
                ),
            ));
        }
        if dialog.messages.len() >= chat::MAX_MESSAGES_PER_DIALOG {
            return Err(ApiError::invalid(
                "message",
                format!(
                    "dialog `{id}` is full ({} messages)",
                    chat::MAX_MESSAGES_PER_DIALOG
                ),
            ));
        }
        dialog.messages.push(message.clone());
        dialog.updated = dialog.updated.clone().max(now.clone());
        Ok((Change::Put(dialog), ()))
    })?;
    Ok(http::json(201, &message))
}

/// `DELETE /api/dialog?id=`.
pub fn delete(req: &ApiRequest) -> Result<Response, ApiError> {
    require_admin(req)?;
    let given = req.required_query("id", "dialog id")?;
    let store = Store::open_default()?;
    let dialog = load(&store, &given)?;
    store.delete(&dialog_key(&dialog.id))?;
    if let Ok(guid) = Uuid::try_parse(&dialog.guid) {
        store.delete(&guid_key(&guid))?;
    }
    Ok(http::json(
        200,
        &json!({
            "success": true,
            "message": format!("dialog `{}` deleted", dialog.id),
            "id": dialog.id,
        }),
    ))
}
