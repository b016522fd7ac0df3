//! The chat component as the tests run it: with an admin token configured, so its write API
//! is on; and how a test creates a dialog or appends to one through that API.

use crate::{Client, Host, HostBuilder, Reply, component};
use edge_api::chat::Dialog;
use serde_json::Value;
use std::path::Path;

/// The admin token every chat test host is configured with.
pub const TOKEN: &str = "t0ken";

/// `runtime-host serve chat` with [`TOKEN`], ready for more options.
pub fn builder(dir: &Path) -> HostBuilder {
    HostBuilder::new(component("chat"), dir).variable("chat_admin_token", TOKEN)
}

/// `runtime-host serve chat` with [`TOKEN`], started.
pub fn host(dir: &Path) -> Host {
    builder(dir).start()
}

/// [`builder`] with the language model granted (as `up` and spin.toml grant it), so
/// `POST /api/dialog/reply` writes replies. The model loads on the first reply.
pub fn with_model(dir: &Path) -> HostBuilder {
    builder(dir).ai_model(edge_api::language_model::MODEL, &crate::ai_models_dir())
}

/// Asks the model for dialog `id`'s next message (`POST /api/dialog/reply`) with `params`.
pub async fn reply(c: &Client, h: &Host, id: &str, params: &Value) -> Reply {
    let url = h.url(&format!("/api/dialog/reply?id={id}"));
    c.post_json(&url, params, Some(TOKEN)).await
}

/// Creates a dialog through the write API: a 201 whose `Location` names the new dialog.
pub async fn create(c: &Client, h: &Host, body: &Value) -> Dialog {
    let r = c.post_json(&h.url("/api/chats"), body, Some(TOKEN)).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let d: Dialog = r.json();
    assert_eq!(
        r.header("location"),
        Some(format!("/api/dialog?id={}", d.id).as_str())
    );
    d
}

/// Appends `message` to dialog `id` (its short id or GUID) through the write API.
pub async fn append(c: &Client, h: &Host, id: &str, message: &Value) -> Reply {
    let url = h.url(&format!("/api/dialog/messages?id={id}"));
    c.post_json(&url, message, Some(TOKEN)).await
}
