//! The sample dialogs (`samples/dialogs.json`: the README's `?id=welcome` and its
//! neighbours), stored the first time the chat service is used on a store that never had
//! them, when the `sample_dialogs` variable is `true` (spin.toml sets it; `runtime-host up`
//! too). A marker in the store says they were stored, so a sample dialog deleted later is
//! not made again, whichever host (`spin up`, `runtime-host up`, a fleet on one Redis)
//! serves the store next.

use crate::dialogs::store_new;
use edge_api::chat::NewDialog;
use guest_kit::kv::Store;
use guest_kit::{ApiError, ErrorCode};

const SAMPLES: &str = include_str!("../samples/dialogs.json");

/// Set once the samples were stored in this store.
const MARKER: &str = "chat/samples-stored";

/// Stores the sample dialogs unless the store had them once or the variable is not `true`.
/// Two first requests at once both store them: the second finds each dialog there.
pub fn store_once() -> Result<(), ApiError> {
    let wanted = guest_kit::config::variable("sample_dialogs").ok().flatten();
    if wanted.as_deref().map(str::trim) != Some("true") {
        return Ok(());
    }
    let store = Store::open_default()?;
    if store.exists(MARKER)? {
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
    store.set_json(MARKER, &true)
}
