//! The chat handlers: the spec's read endpoints and the write API beside them. How records
//! are laid out in the store is [`crate::records`]'s business.

use crate::auth::require_admin;
use crate::records::{self, dialog_key, dialog_not_found, guid_key, load, resolve_id};
use edge_api::chat::{self, Dialog, Message, NewDialog, NewMessage};
use edge_api::time::now_rfc3339;
use guest_kit::http::{self, ApiRequest, Response};
use guest_kit::kv::{Change, Store};
use guest_kit::{ApiError, ErrorCode};
use serde_json::json;
use uuid::Uuid;

/// A fresh short dialog id: 12 hex digits of randomness.
fn new_dialog_id() -> String {
    Uuid::new_v4().simple().to_string()[..12].to_owned()
}

/// An optional non-negative integer query parameter.
fn query_number(req: &ApiRequest, name: &str, max: usize) -> Result<Option<usize>, ApiError> {
    let Some(raw) = req.query_param(name) else {
        return Ok(None);
    };
    match raw.parse::<usize>() {
        Ok(n) if n <= max && raw.bytes().all(|b| b.is_ascii_digit()) => Ok(Some(n)),
        _ => Err(ApiError::invalid(
            name,
            format!("must be a whole number from 0 to {max}"),
        )),
    }
}

/// `GET /api/chats`: every dialog's summary, most recently updated first. With `limit`
/// (1-1000) and `offset`, one page of that order; `X-Total-Count` gives the number of chats.
pub fn list(req: &ApiRequest) -> Result<Response, ApiError> {
    let limit = query_number(req, "limit", chat::MAX_PAGE)?;
    if limit == Some(0) {
        return Err(ApiError::invalid(
            "limit",
            format!("must be a whole number from 1 to {}", chat::MAX_PAGE),
        ));
    }
    let offset = query_number(req, "offset", usize::MAX)?.unwrap_or(0);
    let store = Store::open_default()?;
    let listing = records::summaries(&store)?;
    let mut summaries = listing.summaries;
    chat::sort_summaries(&mut summaries);
    let total = summaries.len();
    let page: Vec<_> = summaries
        .into_iter()
        .skip(offset)
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    let mut resp = http::json(200, &page);
    resp.set_header("x-total-count", total.to_string());
    if !listing.unreadable.is_empty() {
        resp.set_header("x-unreadable-records", listing.unreadable.len().to_string());
    }
    Ok(resp)
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
    let store = Store::open_default()?;
    let dialog = store_new(&store, input)?;
    let mut resp = http::json(201, &dialog);
    resp.set_header("location", format!("/api/dialog?id={}", dialog.id));
    Ok(resp)
}

/// Validates `input` and stores it as a new dialog (409 `already_exists` for an id or GUID
/// taken): what `POST /api/chats` and the sample dialogs ([`crate::samples`]) store.
pub fn store_new(store: &Store, input: NewDialog) -> Result<Dialog, ApiError> {
    let now = now_rfc3339();
    let chat_name = chat::validate_chat_name(&input.chat_name)?;
    if let Some(id) = &input.id {
        chat::validate_id("id", id)?;
    }
    // An id that is a UUID is the dialog's GUID too (see chat::check_id_against_guid).
    let guid = match (&input.guid, &input.id) {
        (Some(g), _) => {
            Uuid::try_parse(g).map_err(|_| ApiError::invalid("GUID", "must be a UUID"))?
        }
        (None, Some(id)) => Uuid::try_parse(id).unwrap_or_else(|_| Uuid::new_v4()),
        (None, None) => Uuid::new_v4(),
    };
    if let Some(id) = &input.id {
        chat::check_id_against_guid(id, &guid)?;
    }
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

    let mut dialog = Dialog {
        id: input.id.clone().unwrap_or_else(new_dialog_id),
        chat_name,
        messages,
        created,
        updated,
        guid: guid.hyphenated().to_string(),
    };
    chat::check_dialog_size(&dialog)?;
    claim_guid(store, &guid)?;
    // A generated id may (very rarely) collide; a client-chosen one must not.
    let attempts = if input.id.is_some() { 1 } else { 8 };
    let mut stored = false;
    for attempt in 0..attempts {
        if attempt > 0 {
            dialog.id = new_dialog_id();
        }
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
    }
    if !stored {
        store.delete(&guid_key(&guid))?;
        return Err(ApiError::new(
            ErrorCode::AlreadyExists,
            format!("a dialog with id `{}` already exists", dialog.id),
        ));
    }
    store.set_json(&guid_key(&guid), &dialog.id)?;
    records::save_summary(store, &dialog)?;
    Ok(dialog)
}

/// Reserves a GUID for a new dialog (409 if a live dialog already has it, as its GUID or as
/// its id). The index entry is written as `""` first and pointed at the dialog once that is
/// stored.
fn claim_guid(store: &Store, guid: &Uuid) -> Result<(), ApiError> {
    let taken = || {
        ApiError::new(
            ErrorCode::AlreadyExists,
            format!("a dialog with GUID `{guid}` already exists"),
        )
    };
    if store.exists(&dialog_key(&guid.hyphenated().to_string()))? {
        return Err(taken());
    }
    let key = guid_key(guid);
    let claimed = store.update(&key, |current: Option<String>| {
        Ok(match current {
            // An entry whose dialog is gone is stale (e.g. a crash between the two writes).
            Some(id) if !id.is_empty() && store.exists(&dialog_key(&id))? => (Change::Keep, false),
            _ => (Change::Put(String::new()), true),
        })
    })?;
    if claimed { Ok(()) } else { Err(taken()) }
}

/// `POST /api/dialog/messages?id=`: appends one message.
pub fn append(req: &ApiRequest) -> Result<Response, ApiError> {
    require_admin(req)?;
    let given = req.required_query("id", "dialog id")?;
    let input: NewMessage = req.json()?;
    let now = now_rfc3339();
    let message = input.into_message("message", || Uuid::new_v4().to_string(), &now)?;
    let store = Store::open_default()?;
    append_to(&store, &given, message.clone(), &now)?;
    Ok(http::json(201, &message))
}

/// Appends `message` to the dialog `given` (its id or GUID) as one compare-and-swap of the
/// dialog, so concurrent appends are all kept: the one path every added message takes (an
/// append, a generated reply). 404 for no such dialog, 409 for a message id it holds
/// already, 400 when it is full, 413 when it would grow past its size.
pub fn append_to(store: &Store, given: &str, message: Message, now: &str) -> Result<(), ApiError> {
    let id = resolve_id(store, given)?.ok_or_else(|| dialog_not_found(given))?;
    let dialog = store.update(&dialog_key(&id), |current: Option<Dialog>| {
        let mut dialog = current.ok_or_else(|| dialog_not_found(given))?;
        if dialog.messages.iter().any(|m| m.id == message.id) {
            return Err(ApiError::new(
                ErrorCode::AlreadyExists,
                format!(
                    "dialog `{id}` already has a message with id `{}`",
                    message.id
                ),
            ));
        }
        check_room(&dialog)?;
        dialog.messages.push(message.clone());
        dialog.updated = dialog.updated.clone().max(now.to_owned());
        chat::check_dialog_size(&dialog)?;
        Ok((Change::Put(dialog.clone()), dialog))
    })?;
    records::save_summary(store, &dialog)
}

/// 400 when `dialog` holds as many messages as a dialog may.
pub fn check_room(dialog: &Dialog) -> Result<(), ApiError> {
    if dialog.messages.len() >= chat::MAX_MESSAGES_PER_DIALOG {
        return Err(ApiError::invalid(
            "message",
            format!(
                "dialog `{}` is full ({} messages)",
                dialog.id,
                chat::MAX_MESSAGES_PER_DIALOG
            ),
        ));
    }
    Ok(())
}

/// `DELETE /api/dialog?id=`.
pub fn delete(req: &ApiRequest) -> Result<Response, ApiError> {
    require_admin(req)?;
    let given = req.required_query("id", "dialog id")?;
    let store = Store::open_default()?;
    let dialog = load(&store, &given)?;
    records::delete(&store, &dialog)?;
    Ok(http::json(
        200,
        &json!({
            "success": true,
            "message": format!("dialog `{}` deleted", dialog.id),
            "id": dialog.id,
        }),
    ))
}
