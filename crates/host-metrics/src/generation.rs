//! The language model's generator (`capabilities::llm::generator`): tokens read and written,
//! requests waiting or under way, and requests turned away because the queue was full, per
//! model. A queue that stays full, or refusals that climb, say the host needs more cores or
//! fewer callers. Its families live here and join the host's registry through [`register`].

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::OnceLock;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabels {
    model: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TokenLabels {
    model: String,
    /// `prompt` or `generated`.
    kind: &'static str,
}

#[derive(Default)]
struct Families {
    tokens: Family<TokenLabels, Counter>,
    queue: Family<ModelLabels, Gauge>,
    refused: Family<ModelLabels, Counter>,
}

fn families() -> &'static Families {
    static FAMILIES: OnceLock<Families> = OnceLock::new();
    FAMILIES.get_or_init(Families::default)
}

/// Adds the generator's families to the host's registry.
pub(super) fn register(r: &mut Registry) {
    let f = families();
    let tokens = "Tokens the language model read (prompt) and wrote (generated)";
    r.register("generation_tokens", tokens, f.tokens.clone());
    let queue = "Requests waiting on or being served by the language model";
    r.register("generation_queue_requests", queue, f.queue.clone());
    let refused = "Requests turned away because every stream was busy and the queue full";
    r.register("generation_refused", refused, f.refused.clone());
}

/// One model's generation metrics.
#[derive(Clone)]
pub struct Generation {
    model: String,
}

impl Generation {
    pub fn new(model: &str) -> Self {
        Self {
            model: model.to_owned(),
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
        families().tokens.get_or_create(&labels).inc_by(n as u64);
    }

    pub fn queue(&self, requests: usize) {
        families()
            .queue
            .get_or_create(&self.labels())
            .set(requests as i64);
    }

    pub fn refused(&self) {
        families().refused.get_or_create(&self.labels()).inc();
    }
}
