//! What minilm says about itself: `/info`, `/capabilities`, `/acceptable_ranges`, `/citation`,
//! `/test_examples`. Facts are the model card's (sentence-transformers/all-MiniLM-L6-v2) and
//! the published sentence-transformers figures, or our own measurement where said so.

use edge_api::embedding::{DIMENSIONS, MAX_TEXTS, MAX_TOKENS, MODEL};
use model_sdk::*;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

pub const NAME: &str = "minilm";

/// Sentence pairs all-MiniLM-L6-v2 was fine-tuned on (the model card's training data table).
const TRAINING_PAIRS: &str = "1,170,060,424";

pub fn info() -> ModelInfo {
    ModelInfo {
        name: NAME.into(),
        description: format!(
            "Sentence embeddings: English text to a {DIMENSIONS}-dimensional unit vector \
             (sentence-transformers' all-MiniLM-L6-v2: a 6-layer MiniLM fine-tuned \
             contrastively on {TRAINING_PAIRS} sentence pairs; mean pooling over the tokens, \
             then unit length), for semantic search, clustering and similarity. The cosine \
             similarity of two texts is the dot product of their vectors. The network runs in \
             the host, behind Spin's fermyon:spin/llm interface (model `{MODEL}`)."
        ),
        license: "MIT (this component); Apache-2.0 (the all-MiniLM-L6-v2 weights)".into(),
        citation: "https://arxiv.org/abs/1908.10084".into(),
        maintainer: "Lightweight model runtime project (edge deployment team)".into(),
        model_version: None,
    }
}

pub fn capabilities() -> Capabilities {
    Capabilities {
        model: NAME.into(),
        capabilities: vec![Capability {
            name: "embedding".into(),
            input_types: vec![InputType::Text],
            output_schema: BTreeMap::from([
                ("embedding".into(), OutputType::Array),
                ("dimensions".into(), OutputType::Float),
                ("model".into(), OutputType::String),
            ]),
            description: format!(
                "data.text (one text) gives `embedding`, an array of {DIMENSIONS} numbers of \
                 unit length, with `dimensions` and `model`; data.texts (1 to {MAX_TEXTS} texts) \
                 is a batch, answered in results.items, one such result per text in order."
            ),
        }],
        elements: None,
    }
}

pub fn acceptable_ranges() -> AcceptableRanges {
    AcceptableRanges {
        model: NAME.into(),
        version: SPEC_VERSION.into(),
        description: format!(
            "all-MiniLM-L6-v2 was fine-tuned on {TRAINING_PAIRS} English sentence pairs \
             (Reddit comments, S2ORC citation pairs, WikiAnswers, PAQ, Stack Exchange, MS MARCO, \
             SNLI/MultiNLI and more; listed on the model card), starting from \
             nreimers/MiniLM-L6-H384-uncased. Published results (sentence-transformers' \
             pretrained model table): 68.06 average over 14 sentence-embedding tasks, 49.54 \
             over 6 semantic-search tasks. An embedding is not a numeric property with a \
             training range, so property_ranges is empty; the input limits are listed under \
             chemical_scope.limitations."
        ),
        property_ranges: BTreeMap::new(),
        chemical_scope: ChemicalScope {
            supported_features: vec![
                "English sentences and short paragraphs (the model is uncased: case is ignored, accents are stripped)".into(),
                format!("up to {MAX_TOKENS} word pieces per text, [CLS] and [SEP] included"),
                format!("up to {MAX_TEXTS} texts per request in data.texts"),
            ],
            limitations: vec![
                format!(
                    "texts over {MAX_TOKENS} word pieces are refused with 400 input_too_long, on \
                     every host (never silently cut): split long documents"
                ),
                "fine-tuning used texts of at most 128 word pieces; longer texts are embedded, \
                 but were not seen in training"
                    .into(),
                "other languages than English, and chemical notations such as SMILES, are outside \
                 the training data"
                    .into(),
                "under `spin up`, Spin's own local engine cuts texts at 128 word pieces; \
                 runtime-host does not. A batch is sent to the host in calls of texts of one \
                 length each, because Spin's engine averages the padding of a mixed-length \
                 batch into the shorter texts' vectors"
                    .into(),
            ],
        },
        usage_recommendations: vec![
            "compare texts by the dot product of their vectors (they have unit length)".into(),
            "embed the texts you compare with the same model and host".into(),
            "send related texts together in data.texts: one request is cheaper than many".into(),
        ],
        input: None,
    }
}

pub fn citation() -> Citation {
    Citation {
        paper_citation: "Reimers, N.; Gurevych, I. Sentence-BERT: Sentence Embeddings using \
                         Siamese BERT-Networks. Proceedings of EMNLP-IJCNLP 2019, 3982-3992. \
                         https://arxiv.org/abs/1908.10084. Base model: Wang, W. et al. MiniLM: \
                         Deep Self-Attention Distillation for Task-Agnostic Compression of \
                         Pre-Trained Transformers. NeurIPS 2020. https://arxiv.org/abs/2002.10957"
            .into(),
        software_bibtex: "@inproceedings{reimers-2019-sentence-bert,\n  title = {Sentence-BERT: \
                          Sentence Embeddings using Siamese BERT-Networks},\n  author = {Reimers, \
                          Nils and Gurevych, Iryna},\n  booktitle = {Proceedings of the 2019 \
                          Conference on Empirical Methods in Natural Language Processing},\n  \
                          year = {2019},\n  url = {https://arxiv.org/abs/1908.10084}\n}"
            .into(),
    }
}

fn example(name: &str, description: &str, category: &str, field: &str, value: Value) -> Example {
    Example {
        name: name.into(),
        description: description.into(),
        category: category.into(),
        input: Map::from_iter([(field.to_owned(), value)]),
    }
}

pub fn test_examples() -> TestExamples {
    TestExamples {
        examples: vec![
            example(
                "short sentence",
                "one sentence to one vector",
                "single text",
                "text",
                json!("A man is eating food."),
            ),
            example(
                "question",
                "a search query",
                "single text",
                "text",
                json!("How do I reset a forgotten password?"),
            ),
            example(
                "chemistry sentence",
                "a sentence from a scientific text",
                "single text",
                "text",
                json!("Aqueous solubility falls as the logP of a molecule rises."),
            ),
        ],
        usage_instructions: UsageInstructions {
            endpoint: "/predict".into(),
            method: "POST".into(),
            body_format: json!({
                "input_type": "text",
                "data": {"text": "<English text>"},
            }),
        },
        expected_output: json!({
            "success": "true",
            "model_name": NAME,
            "results": {
                "embedding": format!("array of {DIMENSIONS} numbers, unit length"),
                "dimensions": DIMENSIONS.to_string(),
                "model": MODEL,
            },
            "computation_time_ms": "time spent",
            "error_message": "null",
        }),
        notes: vec![
            format!(
                "data.texts (an array of 1 to {MAX_TEXTS} texts) instead of data.text is a \
                 batch: results.items holds one result per text in order, a bad text failing \
                 alone, e.g. {{\"texts\": [\"A man is playing a guitar.\", \"Someone plays an \
                 instrument.\"]}}"
            ),
            format!("a text may hold up to {MAX_TOKENS} word pieces ([CLS] and [SEP] included)"),
        ],
    }
}
