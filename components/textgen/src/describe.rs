//! What textgen says about itself: `/info`, `/capabilities`, `/acceptable_ranges`,
//! `/citation`, `/test_examples`. Facts about the model are its model card's and its paper's
//! (HuggingFaceTB/SmolLM2-135M-Instruct, arXiv:2502.02737); what it is good for is what we
//! saw it do here, said plainly: a 135M-parameter model is a small assistant, not an oracle.

use crate::MAX_BATCH;
use crate::request::{MAX_TOKENS, PARAMETERS};
use edge_api::language_model::{CONTEXT_TOKENS, MODEL};
use model_sdk::*;
use serde_json::{Map, json};
use std::collections::BTreeMap;

pub const NAME: &str = "textgen";

/// What the model is for and not for, in the words `/info` and `/acceptable_ranges` share.
const GOOD_FOR: &str = "short, simple replies in English: a greeting, rewording or shortening \
                        a sentence, a short list of ideas, a plain explanation of an everyday \
                        thing";
const NOT_GOOD_FOR: &str = "facts: with 135 million parameters it often gets them wrong, and \
                            says so with confidence (here it said water boils at \"approximately \
                            100°F\"; asked \"What is the capital of France?\" it answered Paris \
                            at temperature 0, but once at 0.8 a city that does not exist); nor \
                            arithmetic, reasoning over several steps, long answers (they drift \
                            and repeat), code, languages other than English, or chemistry (it \
                            knows nothing reliable of molecules: use the property models for \
                            those)";

pub fn info() -> ModelInfo {
    ModelInfo {
        name: NAME.into(),
        description: format!(
            "Text generation: a chat assistant's reply to a message (SmolLM2-135M-Instruct, \
             Hugging Face's 135-million-parameter instruction-tuned language model, 4-bit \
             weights from its GGUF file). It is a small assistant: good for {GOOD_FOR}. It is \
             not good for {NOT_GOOD_FOR}. Check anything it states. The network runs in the \
             host, behind Spin's fermyon:spin/llm interface (model `{MODEL}`); prompt and \
             reply share a context of {CONTEXT_TOKENS} tokens."
        ),
        license: "MIT (this component); Apache-2.0 (the SmolLM2-135M-Instruct weights)".into(),
        citation: "https://arxiv.org/abs/2502.02737".into(),
        maintainer: "Lightweight model runtime project (edge deployment team)".into(),
        model_version: None,
    }
}

pub fn capabilities() -> Capabilities {
    Capabilities {
        model: NAME.into(),
        capabilities: vec![Capability {
            name: "text-generation".into(),
            input_types: vec![InputType::Text],
            output_schema: BTreeMap::from([
                ("text".into(), OutputType::String),
                ("prompt_tokens".into(), OutputType::Float),
                ("generated_tokens".into(), OutputType::Float),
                ("finish_reason".into(), OutputType::String),
                ("model".into(), OutputType::String),
            ]),
            description: format!(
                "data.text (the user's message; data.system optionally sets the system \
                 message) gives `text`, the assistant's reply, with `prompt_tokens` (the chat \
                 as the model read it) and `generated_tokens`, `finish_reason` (`stop`: the \
                 model ended its turn; `length`: max_tokens was reached) and `model`. \
                 Generation parameters are fields of data: {}. data.texts (1 to {MAX_BATCH} \
                 messages) is a batch, answered in results.items in order.",
                PARAMETERS.map(|p| p.field).join(", ")
            ),
        }],
        elements: None,
    }
}

pub fn acceptable_ranges() -> AcceptableRanges {
    AcceptableRanges {
        model: NAME.into(),
        version: SPEC_VERSION.into(),
        description: "SmolLM2-135M was pretrained on 2 trillion tokens of mostly English web \
                      text, code and mathematics (FineWeb-Edu, DCLM, The Stack and curated \
                      sets), then instruction-tuned on the smol-smoltalk conversations and \
                      aligned with Direct Preference Optimization on UltraFeedback (model \
                      card; Allal et al. 2025). It is served from a GGUF file with 4-bit \
                      weights (Q4_1). A generated text has no numeric training range, so \
                      property_ranges is empty; the context, the limits and the parameters \
                      are under chemical_scope."
            .into(),
        property_ranges: BTreeMap::new(),
        chemical_scope: ChemicalScope {
            supported_features: vec![
                format!("good for {GOOD_FOR}"),
                format!(
                    "a context of {CONTEXT_TOKENS} tokens in all: the chat as the model reads \
                     it (its chat format and default system message add about 30 tokens to \
                     the text) plus the reply"
                ),
                format!("up to {MAX_TOKENS} generated tokens per reply (data.max_tokens)"),
                format!("up to {MAX_BATCH} messages per request in data.texts"),
                format!("generation parameters: {}", parameters()),
            ],
            limitations: vec![
                format!("not good for {NOT_GOOD_FOR}"),
                format!(
                    "a message whose chat and max_tokens together exceed {CONTEXT_TOKENS} \
                     tokens is refused with 400 input_too_long (never silently cut)"
                ),
                "each request is a new chat: the model remembers nothing between requests".into(),
                "when every stream of the host's model is taken and its queue is full, a \
                 request is refused with 503 overloaded and a Retry-After header"
                    .into(),
            ],
        },
        usage_recommendations: vec![
            "keep replies short (max_tokens of 100 or less): longer ones drift".into(),
            "leave temperature at 0 for reproducible answers; raise it (0.7, say) for variety"
                .into(),
            "check every fact it states against a trustworthy source".into(),
            "a system message (data.system) sets the tone, e.g. \"Answer in one sentence.\"".into(),
        ],
        input: None,
    }
}

/// Every generation parameter with its range, default and meaning, in words.
fn parameters() -> String {
    PARAMETERS
        .iter()
        .map(|p| {
            format!(
                "{} ({}, default {}: {})",
                p.field,
                p.range.words(),
                p.default,
                p.meaning
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

pub fn citation() -> Citation {
    Citation {
        paper_citation: "Ben Allal, L.; Lozhkov, A.; Bakouch, E.; Martín Blázquez, G.; \
                         Penedo, G.; Tunstall, L.; et al. SmolLM2: When Smol Goes Big - \
                         Data-Centric Training of a Small Language Model. arXiv:2502.02737 \
                         (2025). https://arxiv.org/abs/2502.02737\nWeights: \
                         HuggingFaceTB/SmolLM2-135M-Instruct, Apache-2.0."
            .into(),
        software_bibtex: "@misc{allal2025smollm2,\n  title = {SmolLM2: When Smol Goes Big -- \
                          Data-Centric Training of a Small Language Model},\n  author = {Ben \
                          Allal, Loubna and Lozhkov, Anton and Bakouch, Elie and others},\n  \
                          year = {2025},\n  eprint = {2502.02737},\n  archivePrefix = {arXiv},\n  \
                          url = {https://arxiv.org/abs/2502.02737}\n}"
            .into(),
    }
}

/// The most tokens an example's reply takes.
pub const EXAMPLE_MAX_TOKENS: u32 = 16;

fn example(name: &str, description: &str, text: &str) -> Example {
    Example {
        name: name.into(),
        description: description.into(),
        category: "chat".into(),
        input: Map::from_iter([("text".to_owned(), json!(text))]),
    }
}

/// The examples: short requests, answered in at most [`EXAMPLE_MAX_TOKENS`] tokens (the
/// request format's value, which a client fills the example's text into; the self-test
/// behind `/health` asks the same), so trying them, or checking the model, stays quick.
pub fn test_examples() -> TestExamples {
    TestExamples {
        examples: vec![
            example(
                "greeting",
                "a greeting, answered in a sentence or two",
                "Hello! Who are you?",
            ),
            example(
                "rewording",
                "a sentence made more polite",
                "Rewrite this more politely: Send me the report now.",
            ),
            example(
                "ideas",
                "a short list",
                "Give me three ideas for a rainy afternoon.",
            ),
        ],
        usage_instructions: UsageInstructions {
            endpoint: "/predict".into(),
            method: "POST".into(),
            body_format: json!({
                "input_type": "text",
                "data": {"text": "<your message>", "max_tokens": EXAMPLE_MAX_TOKENS},
            }),
        },
        expected_output: json!({
            "success": "true",
            "model_name": NAME,
            "results": {
                "text": "the assistant's reply",
                "prompt_tokens": "tokens of the chat the model read",
                "generated_tokens": "tokens of the reply",
                "finish_reason": "stop (the model ended its turn) or length (max_tokens reached)",
                "model": MODEL,
            },
            "computation_time_ms": "time spent",
            "error_message": "null",
        }),
        notes: vec![
            format!(
                "generation parameters are fields of data beside the text: {}",
                parameters()
            ),
            "data.system sets the system message, e.g. {\"system\": \"You answer in one \
             short sentence.\", \"text\": \"What is a cloud?\"}; without it the model's \
             default one is used"
                .into(),
            "temperature 0 (the default) is greedy decoding: the same request gets the same \
             reply"
                .into(),
            format!(
                "data.texts (an array of 1 to {MAX_BATCH} messages) instead of data.text is a \
                 batch, the other fields applying to each: results.items holds one result per \
                 message in order"
            ),
            "a small model: expect simple replies, and check any fact it states".into(),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clients (the console, `runtime-host check`) put an example's one input where the
    /// request format has its placeholder and keep the format's other fields: each example
    /// is one `text`, and the format asks for a short reply.
    #[test]
    fn each_example_is_one_text_that_fills_the_format() {
        let examples = test_examples();
        for example in &examples.examples {
            let fields: Vec<&String> = example.input.keys().collect();
            assert_eq!(fields, ["text"], "{}", example.name);
        }
        let data = &examples.usage_instructions.body_format["data"];
        assert_eq!(data["text"], "<your message>");
        assert_eq!(data["max_tokens"], EXAMPLE_MAX_TOKENS);
    }
}
