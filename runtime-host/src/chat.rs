//! The chat service's start-up (interface A) as `up` runs it: its admin token, its variables,
//! and the sample dialogs a fresh store starts with. (`runtime-host serve chat.wasm` serves
//! the component with whatever `--variable`s it is given; `chats.rs` is the import and export
//! client.)

use crate::server::ComponentServer;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Sample dialogs loaded into a fresh chat store.
const SAMPLE_DIALOGS: &str = include_str!("../../components/chat/samples/dialogs.json");

/// Where the admin token came from, for the line `up` prints.
enum TokenSource {
    Environment,
    File(PathBuf),
}

pub struct Recipe {
    token: String,
    source: TokenSource,
}

impl Recipe {
    /// The admin token: `$CHAT_ADMIN_TOKEN`, else the one kept in `data_dir` (made on first
    /// run, so it survives restarts and scripts can read it).
    pub fn new(data_dir: &Path) -> Result<Self> {
        if let Ok(token) = std::env::var("CHAT_ADMIN_TOKEN")
            && !token.is_empty()
        {
            let source = TokenSource::Environment;
            return Ok(Self { token, source });
        }
        let file = data_dir.join("chat_admin_token");
        let token = match std::fs::read_to_string(&file) {
            Ok(t) => t.trim().to_owned(),
            Err(_) => {
                let token = uuid::Uuid::new_v4().simple().to_string();
                std::fs::write(&file, &token)
                    .with_context(|| format!("writing {}", file.display()))?;
                token
            }
        };
        let source = TokenSource::File(file);
        Ok(Self { token, source })
    }

    /// The component's variables.
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        vec![("chat_admin_token", self.token.clone())]
    }

    /// Where a user finds the admin token.
    pub fn token_note(&self) -> String {
        match &self.source {
            TokenSource::Environment => "admin token from $CHAT_ADMIN_TOKEN".into(),
            TokenSource::File(file) => format!("admin token in {}", file.display()),
        }
    }

    /// Loads the sample dialogs through the service itself (so they are validated like any
    /// import); dialogs already there are left as they are.
    pub async fn seed(&self, chat: &ComponentServer) -> Result<()> {
        let dialogs: Vec<serde_json::Value> = serde_json::from_str(SAMPLE_DIALOGS)?;
        let auth = format!("Bearer {}", self.token);
        let headers = [
            ("authorization", auth.as_str()),
            ("content-type", "application/json"),
        ];
        for d in dialogs {
            let body = serde_json::to_vec(&d)?;
            let (status, body) = chat.call_with("POST", "/api/chats", body, &headers).await?;
            if status != 201 && status != 409 {
                let body = String::from_utf8_lossy(&body);
                tracing::warn!(status, %body, "sample dialog not loaded");
            }
        }
        Ok(())
    }
}
