//! The AI models this host runs, by the names components ask for (Spin's
//! `ai_models = [...]`): one [`Engine`] each.

use crate::llm::engine::Engine;
use crate::llm::{minilm, smollm2};

/// The models this host runs.
pub const ENGINES: &[Engine] = &[minilm::ENGINE, smollm2::ENGINE];

/// The engine called `name`, if this host runs one.
pub fn find(name: &str) -> Option<&'static Engine> {
    ENGINES.iter().find(|e| e.name == name)
}

/// The names of every engine, for messages.
pub fn names() -> String {
    ENGINES
        .iter()
        .map(|e| format!("`{}`", e.name))
        .collect::<Vec<_>>()
        .join(", ")
}
