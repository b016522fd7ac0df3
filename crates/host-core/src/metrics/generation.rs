//! The language model's generator (`capabilities::llm::generator`): tokens read and written,
//! requests waiting or under way, and requests turned away because the queue was full, per
//! model. A queue that stays full, or refusals that climb, say the host needs more cores or
//! fewer callers.

use super::{ModelLabels, Name, global};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::Arc;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TokenLabels {
    pub model: Name,
    /// `prompt` or `generated`.
    pub kind: &'static str,
}

#[derive(Default)]
pub struct Families {
    tokens: Family<TokenLabels, Counter>,
    queue: Family<ModelLabels, Gauge>,
    refused: Family<ModelLabels, Counter>,
}

impl Families {
    pub(super) fn register(&self, r: &mut Registry) {
        let tokens = "Tokens the language model read (prompt) and wrote (generated)";
        r.register("generation_tokens", tokens, self.tokens.clone());
        let queue = "Requests waiting on or being served by the language model";
        r.register("generation_queue_requests", queue, self.queue.clone());
        let refused = "Requests turned away because every stream was busy and the queue full";
        r.register("generation_refused", refused, self.refused.clone());
    }
}

/// One model's generation metrics.
#[derive(Clone)]
pub struct Generation {
    model: Name,
}

impl Generation {
    pub fn new(model: &str) -> Self {
        Self {
            model: Name(Arc::from(model)),
        }
    }

    fn labels(&self) -> ModelLabels {
        ModelLabels {
            model: self.model.clone(),
        }
    }

    pub fn tokens(&self, kind: &'static str, n: usize) {
        let labels = TokenLabels {
            model: self.model.clone(),
            kind,
        };
        global()
            .generation
            .tokens
            .get_or_create(&labels)
            .inc_by(n as u64);
    }

    pub fn queue(&self, requests: usize) {
        global()
            .generation
            .queue
            .get_or_create(&self.labels())
            .set(requests as i64);
    }

    pub fn refused(&self) {
        global()
            .generation
            .refused
            .get_or_create(&self.labels())
            .inc();
    }
}
