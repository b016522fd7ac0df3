//! Interface A: chat summaries, dialogs and messages (spec 2.1, 2.2; docs/DESIGN.md "Chat").
//!
//! The spec leaves the message object open; docs/DESIGN.md fixes it as `id`, `role`, `content`,
//! `created`, and optional `name`, `model`, `metadata`. The write API (ours, beside the
//! read-only spec endpoints) takes [`NewDialog`] and [`NewMessage`]; both accept the optional
//! identity fields an export carries, so an exported file imports back unchanged.

use crate::error::ApiError;
use crate::routes::Route;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Interface A (spec 4.1) and the write API beside it (docs/DESIGN.md), with the reply the
/// language model writes (issue 60).
pub const ROUTES: [Route; 4] = [
    Route {
        path: "/api/chats",
        methods: &["GET", "POST"],
    },
    Route {
        path: "/api/dialog",
        methods: &["GET", "DELETE"],
    },
    Route {
        path: "/api/dialog/messages",
        methods: &["POST"],
    },
    Route {
        path: "/api/dialog/reply",
        methods: &["POST"],
    },
];

/// Longest accepted `chatName`, in characters.
pub const MAX_CHAT_NAME_CHARS: usize = 200;
/// Longest accepted client-chosen dialog or message `id`.
pub const MAX_ID_CHARS: usize = 64;
/// Most messages one dialog may hold; protects listing and appends from unbounded records.
pub const MAX_MESSAGES_PER_DIALOG: usize = 10_000;
/// Largest a stored dialog may grow, as JSON. Every read path loads one dialog whole (and
/// answers it as one JSON body), so a write that would pass this is refused: what is
/// accepted can always be read back within a component's memory (128 MiB by default).
pub const MAX_DIALOG_BYTES: usize = 8 << 20;
/// Largest body the chat service reads from its authenticated writer when a dialog is
/// created whole (`POST /api/chats`, as `chats import` restores an export): a dialog at
/// [`MAX_DIALOG_BYTES`] and 1 MiB more for the whitespace of a file written by hand. Every
/// other request, and one without the admin token, is read up to 1 MiB.
pub const MAX_WRITE_BODY_BYTES: usize = MAX_DIALOG_BYTES + (1 << 20);
/// Deepest nesting of a message's `metadata` (the object itself is level 1). A stored
/// dialog nests three levels above it (dialog, `messages`, message), so every dialog stays
/// far below the JSON parsers' limit of 128 and always decodes.
pub const MAX_METADATA_DEPTH: usize = 32;
/// Most summaries one `GET /api/chats?limit=` page may hold.
pub const MAX_PAGE: usize = 1000;

/// Element of `GET /api/chats` (spec 2.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatSummary {
    pub id: String,
    #[serde(rename = "chatName")]
    pub chat_name: String,
    #[serde(rename = "numMessages")]
    pub num_messages: u64,
    pub created: String,
    pub updated: String,
    #[serde(rename = "GUID")]
    pub guid: String,
}

/// `GET /api/dialog` (spec 2.2). Also the stored record and the export format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dialog {
    pub id: String,
    #[serde(rename = "chatName")]
    pub chat_name: String,
    pub messages: Vec<Message>,
    pub created: String,
    pub updated: String,
    #[serde(rename = "GUID")]
    pub guid: String,
}

impl Dialog {
    pub fn summary(&self) -> ChatSummary {
        ChatSummary {
            id: self.id.clone(),
            chat_name: self.chat_name.clone(),
            num_messages: self.messages.len() as u64,
            created: self.created.clone(),
            updated: self.updated.clone(),
            guid: self.guid.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// One message of a dialog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub id: String,
    pub role: Role,
    pub content: String,
    pub created: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// Body of `POST /api/chats`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewDialog {
    #[serde(rename = "chatName")]
    pub chat_name: String,
    #[serde(default)]
    pub messages: Vec<NewMessage>,
    /// Optional on import; generated when absent.
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default, rename = "GUID")]
    pub guid: Option<String>,
    #[serde(default)]
    pub created: Option<String>,
    #[serde(default)]
    pub updated: Option<String>,
}

/// Body of `POST /api/dialog/messages` and element of [`NewDialog::messages`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewMessage {
    pub role: Role,
    pub content: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub created: Option<String>,
}

/// Checks a client-chosen identifier: 1-64 of `A-Z a-z 0-9 - _ .`, so it is safe in a URL
/// query and as part of a storage key.
pub fn validate_id(field: &str, id: &str) -> Result<(), ApiError> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if id.is_empty() || id.chars().count() > MAX_ID_CHARS || !id.chars().all(ok_char) {
        return Err(ApiError::invalid(
            field,
            format!("must be 1-{MAX_ID_CHARS} characters of A-Z, a-z, 0-9, '-', '_' or '.'"),
        ));
    }
    Ok(())
}

/// Checks a `chatName` and returns it trimmed.
pub fn validate_chat_name(name: &str) -> Result<String, ApiError> {
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return Err(ApiError::invalid("chatName", "must not be empty"));
    }
    if trimmed.chars().count() > MAX_CHAT_NAME_CHARS {
        return Err(ApiError::invalid(
            "chatName",
            format!("must be at most {MAX_CHAT_NAME_CHARS} characters"),
        ));
    }
    Ok(trimmed.to_owned())
}

/// Checks an optional client-supplied timestamp, returning it in canonical UTC form.
pub fn validate_timestamp(field: &str, value: Option<&str>) -> Result<Option<String>, ApiError> {
    match value {
        None => Ok(None),
        Some(s) => crate::time::normalize_rfc3339(s)
            .map(Some)
            .ok_or_else(|| ApiError::invalid(field, "must be an RFC 3339 date-time")),
    }
}

/// How deeply `value` nests: 0 for a scalar, 1 for an object or array of scalars.
pub fn nesting_depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(nesting_depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(nesting_depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Checks a message's `metadata` against [`MAX_METADATA_DEPTH`]: the one rule every write
/// path (create, append, import) shares.
pub fn validate_metadata(field: &str, metadata: &Map<String, Value>) -> Result<(), ApiError> {
    let depth = 1 + metadata.values().map(nesting_depth).max().unwrap_or(0);
    if depth > MAX_METADATA_DEPTH {
        return Err(ApiError::invalid(
            field,
            format!("nests {depth} levels deep; at most {MAX_METADATA_DEPTH} are accepted"),
        ));
    }
    Ok(())
}

/// Whether an id given by a client may name a dialog whose GUID is `guid`. An id that is
/// itself a UUID must be that dialog's own GUID: `/api/dialog?id=` accepts ids and GUIDs
/// alike, so a dialog whose id equalled another dialog's GUID would take over its address.
pub fn check_id_against_guid(id: &str, guid: &uuid::Uuid) -> Result<(), ApiError> {
    match uuid::Uuid::try_parse(id) {
        Ok(as_uuid) if as_uuid != *guid => Err(ApiError::invalid(
            "id",
            "an id in the form of a UUID must be the dialog's own GUID (ids and GUIDs share \
             one namespace in /api/dialog?id=)",
        )),
        _ => Ok(()),
    }
}

/// Length of `value` encoded as JSON, without building the encoding.
pub fn encoded_len<T: Serialize>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail, and our types always serialize.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Refuses a dialog that would be larger than [`MAX_DIALOG_BYTES`] once stored.
pub fn check_dialog_size(dialog: &Dialog) -> Result<(), ApiError> {
    let len = encoded_len(dialog);
    if len > MAX_DIALOG_BYTES {
        return Err(ApiError::new(
            crate::error::ErrorCode::PayloadTooLarge,
            format!(
                "dialog `{}` would hold {len} bytes; a dialog holds at most {MAX_DIALOG_BYTES} \
                 bytes of JSON (start a new dialog)",
                dialog.id
            ),
        ));
    }
    Ok(())
}

impl NewMessage {
    /// Turns the request into a stored message. `new_id` supplies an id when none was given;
    /// `now` is the creation time when none was given.
    pub fn into_message(
        self,
        field: &str,
        new_id: impl FnOnce() -> String,
        now: &str,
    ) -> Result<Message, ApiError> {
        let id = match self.id {
            Some(id) => {
                validate_id(&format!("{field}.id"), &id)?;
                id
            }
            None => new_id(),
        };
        let created = validate_timestamp(&format!("{field}.created"), self.created.as_deref())?
            .unwrap_or_else(|| now.to_owned());
        if let Some(metadata) = &self.metadata {
            validate_metadata(&format!("{field}.metadata"), metadata)?;
        }
        Ok(Message {
            id,
            role: self.role,
            content: self.content,
            created,
            name: self.name,
            model: self.model,
            metadata: self.metadata,
        })
    }
}

/// Sorts summaries as `/api/chats` lists them: most recently updated first, then most
/// recently created, then by id, so the order is total and stable between calls.
pub fn sort_summaries(list: &mut [ChatSummary]) {
    list.sort_by(|a, b| {
        b.updated
            .cmp(&a.updated)
            .then_with(|| b.created.cmp(&a.created))
            .then_with(|| a.id.cmp(&b.id))
    });
}

#[cfg(test)]
mod tests;
