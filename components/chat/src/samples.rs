//! The sample dialogs (`samples/dialogs.json`: the README's `?id=welcome` and its
//! neighbours), stored the first time the chat service is used on a store that never had
//! them, when the `sample_dialogs` variable is `true` (spin.toml sets it; `runtime-host up`
//! too). A marker in the store says they were stored, so a sample dialog deleted later is
//! not made again, whichever host (`spin up`, `runtime-host up`, a fleet on one Redis)
//! serves the store next.

use crate::dialogs::store_new;
use edge_api::chat::NewDialog;
use guest_kit::kv::{Change, Store};
use guest_kit::{ApiError, ErrorCode};

const SAMPLES: &str = include_str!("../samples/dialogs.json");

/// Set once the samples were stored in this store (claimed before they are stored).
const MARKER: &str = "chat/samples-stored";

/// Stores the sample dialogs unless the store had them once or the variable is not `true`.
/// A failure is logged, never the request's: the samples are a convenience, and a store
/// that cannot take them now fails the request's own work with its own error.
pub fn store_once() {
    if let Err(e) = try_store_once() {
        eprintln!("chat: the sample dialogs were not stored: {e}");
    }
}

/// One read once they are stored. Otherwise the marker is claimed first, under the store's
/// lock (`Store::update`), so of two first requests at once (two hosts on one Redis) only
/// one stores them; a crash between the claim and the last dialog leaves some samples out,
/// never a dialog twice.
fn try_store_once() -> Result<(), ApiError> {
    let wanted = guest_kit::config::variable("sample_dialogs").ok().flatten();
    if wanted.as_deref().map(str::trim) != Some("true") {
        return Ok(());
    }
    let store = Store::open_default()?;
    if store.exists(MARKER)? {
        return Ok(());
    }
    let claimed = store.update(MARKER, |current: Option<bool>| {
        Ok(match current {
            Some(_) => (Change::Keep, false),
            None => (Change::Put(true), true),
        })
    })?;
    if !claimed {
        return Ok(());
    }
    let samples: Vec<NewDialog> = serde_json::from_str(SAMPLES)
        .map_err(|e| ApiError::internal(format!("the sample dialogs do not parse: {e}")))?;
    for dialog in samples {
        match store_new(&store, dialog) {
            Ok(_) => {}
            Err(e) if e.code == ErrorCode::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
