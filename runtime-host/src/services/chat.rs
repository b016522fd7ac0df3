//! The chat service's start-up (interface A) as `up` runs it: its admin token and its
//! variables (the component stores the sample dialogs a fresh store starts with). (`runtime-host serve chat.wasm` serves
//! the component with whatever `--variable`s it is given; `runtime-host chats` is the import
//! and export client.)

use crate::services::launch::{Launch, Launcher};
use anyhow::Result;
use host_core::capabilities::keyvalue::KeyValue;
use host_core::http::server::ComponentServer;
use host_core::runtime::flags::Access;
use host_core::support::token::Token;
use std::path::Path;

pub struct Recipe {
    token: Token,
}

impl Recipe {
    /// The admin token: `$CHAT_ADMIN_TOKEN`, else the one kept in `data_dir` (made on first
    /// run, so it survives restarts and scripts can read it).
    pub fn new(data_dir: &Path) -> Result<Self> {
        let token = Token::load("CHAT_ADMIN_TOKEN", data_dir, "chat_admin_token")?;
        Ok(Self { token })
    }

    /// The chat component at `component` launched on the stores `kv`, with its admin token,
    /// no files, and the language model its replies are written with (`ai_models` in
    /// spin.toml; loaded on the first reply, so a host without it installed still serves
    /// chat, and a reply says how to install it), its bodies capped at `--max-body` or a
    /// whole dialog's size, whichever is larger.
    pub async fn launch(
        &self,
        launcher: &Launcher,
        component: &Path,
        kv: KeyValue,
    ) -> Result<Launch> {
        // The component stores its sample dialogs on a store's first request, once.
        let vars = [
            ("chat_admin_token", self.token.value.clone()),
            ("sample_dialogs", "true".to_owned()),
        ];
        let access = Access {
            ai_models: vec![edge_api::language_model::MODEL.to_owned()],
            ..Access::nothing("chat")
        };
        let grants = launcher.grants(kv, &vars, &access)?;
        // A whole dialog at the size limit must import (the component itself reads that
        // much only from the admin).
        let launcher = launcher.with_body_of_at_least(edge_api::chat::MAX_WRITE_BODY_BYTES);
        launcher.launch(component, grants, Vec::new()).await
    }

    /// Where a user finds the admin token.
    pub fn token_note(&self) -> String {
        format!("admin {}", self.token.note)
    }

    /// Has the component store its sample dialogs now, with the stack's start, rather than
    /// on the first client's request: its first request does (once per store, see the
    /// component's `samples`).
    pub async fn seed(&self, chat: &ComponentServer) -> Result<()> {
        let (status, body) = chat
            .call_with("GET", "/api/chats?limit=1", Vec::new(), &[])
            .await?;
        if status != 200 {
            let body = String::from_utf8_lossy(&body);
            tracing::warn!(status, %body, "the sample dialogs may not be stored");
        }
        Ok(())
    }
}
