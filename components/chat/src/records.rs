//! How dialogs are kept in the key-value store (store `default`; docs/DECISIONS.md "Chat
//! storage").
//!
//! - `chat/dialog/<id>`: the [`Dialog`] as JSON, the single source of truth. Every change is
//!   a compare-and-swap on it, so concurrent appends never lose or duplicate a message.
//! - `chat/summary/<id>`: its [`ChatSummary`], derived from the dialog and rewritten after
//!   every change, so `GET /api/chats` reads a few hundred bytes per dialog instead of whole
//!   dialogs. A summary only ever moves forward (more messages, a later `updated`), so two
//!   writers finishing out of order leave the newer one; a summary left behind by a write cut
//!   short is put right by the next write or read of that dialog.
//! - `chat/guid/<GUID>`: the dialog id, so `/api/dialog?id=` also accepts the GUID.
//!
//! Dialogs stored before summaries existed get theirs the first time the list is read.

use edge_api::chat::{ChatSummary, Dialog};
use guest_kit::kv::{Change, Store};
use guest_kit::{ApiError, ErrorCode};
use uuid::Uuid;

const CHAT_PREFIX: &str = "chat/";
const DIALOG_PREFIX: &str = "chat/dialog/";
const SUMMARY_PREFIX: &str = "chat/summary/";
const GUID_PREFIX: &str = "chat/guid/";

/// Summaries read per store call while listing.
const LIST_BATCH: usize = 256;

pub fn dialog_key(id: &str) -> String {
    format!("{DIALOG_PREFIX}{id}")
}

fn summary_key(id: &str) -> String {
    format!("{SUMMARY_PREFIX}{id}")
}

pub fn guid_key(guid: &Uuid) -> String {
    format!("{GUID_PREFIX}{}", guid.hyphenated())
}

pub fn dialog_not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("dialog not found: no dialog has id or GUID `{id}`"))
}

/// Whether `summary` describes a later state of its dialog than `than`.
fn is_newer(summary: &ChatSummary, than: &ChatSummary) -> bool {
    (summary.num_messages, &summary.updated) > (than.num_messages, &than.updated)
}

/// Writes the summary of `dialog` unless a newer one is already stored.
pub fn save_summary(store: &Store, dialog: &Dialog) -> Result<(), ApiError> {
    let fresh = dialog.summary();
    store.update(&summary_key(&dialog.id), |current: Option<ChatSummary>| {
        Ok(match current {
            Some(stored) if stored == fresh || is_newer(&stored, &fresh) => (Change::Keep, ()),
            _ => (Change::Put(fresh.clone()), ()),
        })
    })
}

/// Removes a dialog and everything derived from it. The dialog goes first: a summary or
/// GUID entry whose dialog is gone is ignored by every read.
pub fn delete(store: &Store, dialog: &Dialog) -> Result<(), ApiError> {
    store.remove(&dialog_key(&dialog.id))?;
    store.delete(&summary_key(&dialog.id))?;
    if let Ok(guid) = Uuid::try_parse(&dialog.guid) {
        store.delete(&guid_key(&guid))?;
    }
    Ok(())
}

/// Finds the dialog id behind an `id` query value, which may be the id or the GUID.
pub fn resolve_id(store: &Store, given: &str) -> Result<Option<String>, ApiError> {
    if store.exists(&dialog_key(given))? {
        return Ok(Some(given.to_owned()));
    }
    match Uuid::try_parse(given) {
        Ok(guid) => Ok(store
            .get_json::<String>(&guid_key(&guid))?
            .filter(|id| !id.is_empty())),
        Err(_) => Ok(None),
    }
}

/// The dialog behind an id or GUID (404 if none). Its summary is put right on the way when
/// a write was cut short between the dialog and its summary.
pub fn load(store: &Store, given: &str) -> Result<Dialog, ApiError> {
    let id = resolve_id(store, given)?.ok_or_else(|| dialog_not_found(given))?;
    let dialog = store
        .get_json::<Dialog>(&dialog_key(&id))?
        .ok_or_else(|| dialog_not_found(given))?;
    let stored = store
        .get_json::<ChatSummary>(&summary_key(&id))
        .ok()
        .flatten();
    if stored.as_ref() != Some(&dialog.summary()) {
        save_summary(store, &dialog)?;
    }
    Ok(dialog)
}

/// What the list found besides the summaries it answers with.
pub struct Listing {
    pub summaries: Vec<ChatSummary>,
    /// Records that could not be decoded: skipped, named in the log, counted in a header.
    pub unreadable: Vec<String>,
}

/// Every dialog's summary, in no particular order. Reads only summaries (and, once, the
/// dialogs stored before summaries existed), so its cost does not grow with message sizes.
pub fn summaries(store: &Store) -> Result<Listing, ApiError> {
    let (mut dialogs, mut summarized) = (Vec::new(), std::collections::HashSet::new());
    for key in store.keys_with_prefix(CHAT_PREFIX)? {
        if let Some(id) = key.strip_prefix(DIALOG_PREFIX) {
            dialogs.push(id.to_owned());
        } else if let Some(id) = key.strip_prefix(SUMMARY_PREFIX) {
            summarized.insert(id.to_owned());
        }
    }
    let mut listing = Listing {
        summaries: Vec::with_capacity(dialogs.len()),
        unreadable: Vec::new(),
    };
    let (with_summary, without): (Vec<String>, Vec<String>) =
        dialogs.into_iter().partition(|id| summarized.contains(id));
    for id in without {
        migrate(store, &id, &mut listing)?;
    }
    for batch in with_summary.chunks(LIST_BATCH) {
        let keys: Vec<String> = batch.iter().map(|id| summary_key(id)).collect();
        for (key, summary) in store.get_many_each::<ChatSummary>(&keys)? {
            match summary {
                Ok(s) => listing.summaries.push(s),
                Err(e) => unreadable(&mut listing, &key, &e),
            }
        }
    }
    Ok(listing)
}

/// Gives a dialog stored before summaries existed its summary (reading it once).
fn migrate(store: &Store, id: &str, listing: &mut Listing) -> Result<(), ApiError> {
    let key = dialog_key(id);
    match store.get_json::<Dialog>(&key) {
        Ok(Some(dialog)) => {
            save_summary(store, &dialog)?;
            listing.summaries.push(dialog.summary());
        }
        Ok(None) => {} // deleted meanwhile
        Err(e) if e.code == ErrorCode::StoreError => unreadable(listing, &key, &e),
        Err(e) => return Err(e),
    }
    Ok(())
}

fn unreadable(listing: &mut Listing, key: &str, error: &ApiError) {
    eprintln!(
        "chat: skipping an unreadable record in the list: {}",
        error.message
    );
    listing.unreadable.push(key.to_owned());
}
