//! What one `/predict` asks for, read from its `data`: the user's text, an optional system
//! message, and the generation parameters (Spin's `inferencing-params`, one field each).
//!
//! The parameters are fields of `data` beside the text, as the specification lets a model
//! take model-specific fields (2.6): a batch (`data.texts`) then applies them to every item.
//! Every rule lives in [`PARAMETERS`], which the checks, the JSON Schema and
//! `/acceptable_ranges` all read, so the three cannot disagree.

use edge_api::language_model::{CONTEXT_TOKENS, chat_prompt};
use model_sdk::ApiError;
use serde_json::{Map, Value, json};
use spin_sdk::llm::InferencingParams;

/// The most tokens one request may ask for: `runtime-host`'s own cap, refused here first so
/// every host refuses the same requests, naming the field.
pub const MAX_TOKENS: u32 = 1024;

/// The chat format's turn markers: a text holding one could end the user's turn and write
/// the assistant's, so it is refused rather than passed on.
const MARKERS: [&str; 2] = ["<|im_start|>", "<|im_end|>"];

/// One generation, ready for `infer`.
#[derive(Debug, Clone)]
pub struct Generation {
    pub prompt: String,
    pub params: InferencingParams,
}

/// The values a parameter may take.
#[derive(Debug, Clone, Copy)]
pub enum Range {
    /// A whole number from `min` to `max`.
    Whole { min: u32, max: u32 },
    /// A number above `min` (or at it, when `min_included`), at most `max` where there is one.
    Real {
        min: f64,
        min_included: bool,
        max: Option<f64>,
    },
}

/// One generation parameter: its field, what it may be, its value when the request leaves
/// it out, and what it does.
#[derive(Debug, Clone, Copy)]
pub struct Parameter {
    pub field: &'static str,
    pub range: Range,
    pub default: f64,
    pub meaning: &'static str,
}

/// Every parameter. The defaults are Spin's, except `temperature`: 0 (greedy decoding), so
/// that the same request gets the same answer, as a prediction should, and sampling is
/// asked for.
pub const PARAMETERS: [Parameter; 6] = [
    Parameter {
        field: "max_tokens",
        range: Range::Whole {
            min: 1,
            max: MAX_TOKENS,
        },
        default: 100.0,
        meaning: "the most tokens to generate; the prompt and these together must fit the \
                  model's context of 2048 tokens",
    },
    Parameter {
        field: "temperature",
        range: Range::Real {
            min: 0.0,
            min_included: true,
            max: None,
        },
        default: 0.0,
        meaning: "0 is greedy decoding (the most likely token each time: the same request, \
                  the same answer); above 0 samples, more varied the higher",
    },
    Parameter {
        field: "top_k",
        range: Range::Whole {
            min: 0,
            max: u32::MAX,
        },
        default: 40.0,
        meaning: "sample among the k most likely tokens only; 0 is no limit (with temperature \
                  above 0)",
    },
    Parameter {
        field: "top_p",
        range: Range::Real {
            min: 0.0,
            min_included: false,
            max: Some(1.0),
        },
        default: 0.9,
        meaning: "sample among the most likely tokens whose probabilities add up to p \
                  (nucleus sampling; with temperature above 0)",
    },
    Parameter {
        field: "repeat_penalty",
        range: Range::Real {
            min: 0.0,
            min_included: false,
            max: None,
        },
        default: 1.1,
        meaning: "makes tokens among the last repeat_penalty_last_n less likely (above 1) or \
                  more (below 1); 1 is none",
    },
    Parameter {
        field: "repeat_penalty_last_n",
        range: Range::Whole {
            min: 0,
            max: CONTEXT_TOKENS as u32,
        },
        default: 64.0,
        meaning: "how many of the latest tokens the repeat penalty looks at; 0 is none",
    },
];

/// The fields `data` may hold.
const FIELDS: [&str; 8] = [
    "text",
    "system",
    "max_tokens",
    "temperature",
    "top_k",
    "top_p",
    "repeat_penalty",
    "repeat_penalty_last_n",
];

impl Range {
    /// The range in words, for error messages and descriptions.
    pub fn words(&self) -> String {
        match *self {
            Range::Whole { min, max } if max == u32::MAX => format!("a whole number from {min}"),
            Range::Whole { min, max } => format!("a whole number from {min} to {max}"),
            Range::Real {
                min,
                min_included,
                max,
            } => {
                let low = match min_included {
                    true => format!("at least {min}"),
                    false => format!("above {min}"),
                };
                match max {
                    Some(max) => format!("a number {low} and at most {max}"),
                    None => format!("a number {low}"),
                }
            }
        }
    }

    /// `value` if it is in range.
    fn read(&self, field: &str, value: &Value) -> Result<f64, ApiError> {
        let refuse = || {
            ApiError::invalid(
                &format!("data.{field}"),
                format!("must be {}", self.words()),
            )
        };
        match *self {
            Range::Whole { min, max } => value
                .as_u64()
                .filter(|v| (u64::from(min)..=u64::from(max)).contains(v))
                .map(|v| v as f64)
                .ok_or_else(refuse),
            Range::Real {
                min,
                min_included,
                max,
            } => value
                .as_f64()
                .filter(|v| if min_included { *v >= min } else { *v > min })
                .filter(|v| max.is_none_or(|max| *v <= max))
                .ok_or_else(refuse),
        }
    }

    /// The JSON Schema of the range.
    fn schema(&self) -> Value {
        match *self {
            Range::Whole { min, max } => json!({"type": "integer", "minimum": min, "maximum": max}),
            Range::Real {
                min,
                min_included,
                max,
            } => {
                let mut schema = json!({"type": "number"});
                let low = if min_included {
                    "minimum"
                } else {
                    "exclusiveMinimum"
                };
                schema[low] = json!(min);
                if let Some(max) = max {
                    schema["maximum"] = json!(max);
                }
                schema
            }
        }
    }
}

/// The generation `data` asks for (one request, or one item of a batch: the SDK makes each
/// `data.texts` item a `data.text` beside the shared fields), checked.
pub fn read(data: &Map<String, Value>) -> Result<Generation, ApiError> {
    model_sdk::input::only_fields(
        data,
        &FIELDS,
        "send data.text, or data.texts for a batch, with an optional data.system and the \
         generation parameters listed in /openapi.json",
    )?;
    let text = model_sdk::input::string_field(data, "text")?
        .ok_or_else(|| ApiError::missing("data.text"))?;
    content("data.text", text)?;
    let system = model_sdk::input::string_field(data, "system")?;
    if let Some(system) = system {
        content("data.system", system)?;
    }
    let mut values = [0.0; PARAMETERS.len()];
    for (value, parameter) in values.iter_mut().zip(&PARAMETERS) {
        *value = match data.get(parameter.field) {
            None | Some(Value::Null) => parameter.default,
            Some(given) => parameter.range.read(parameter.field, given)?,
        };
    }
    let [
        max_tokens,
        temperature,
        top_k,
        top_p,
        repeat_penalty,
        last_n,
    ] = values;
    let messages = system
        .map(|s| ("system", s))
        .into_iter()
        .chain([("user", text)]);
    Ok(Generation {
        prompt: chat_prompt(messages),
        params: InferencingParams {
            max_tokens: max_tokens as u32,
            temperature: temperature as f32,
            top_k: top_k as u32,
            top_p: top_p as f32,
            repeat_penalty: repeat_penalty as f32,
            repeat_penalty_last_n_token_count: last_n as u32,
        },
    })
}

/// A message must say something, and may not hold the chat format's markers.
fn content(field: &str, text: &str) -> Result<(), ApiError> {
    if text.trim().is_empty() {
        return Err(ApiError::invalid(field, "must not be empty or blank"));
    }
    if let Some(marker) = MARKERS.iter().find(|m| text.contains(*m)) {
        return Err(ApiError::invalid(
            field,
            format!("must not hold the chat format's marker {marker}"),
        ));
    }
    Ok(())
}

/// JSON Schema of `data` for one generation.
pub fn data_schema() -> Value {
    let message = |what: &str| {
        json!({
            "type": "string",
            "pattern": "\\S",
            "description": format!(
                "{what}; not blank, without the chat format's markers <|im_start|> and <|im_end|>. \
                 It and the answer must fit the model's context of {CONTEXT_TOKENS} tokens \
                 (longer is 400 input_too_long)."
            ),
        })
    };
    let mut properties = Map::new();
    properties.insert("text".into(), message("The user's message"));
    let mut system = message(
        "The system message, before the user's (without it, the model's own: \"You are a \
         helpful AI assistant named SmolLM, trained by Hugging Face\")",
    );
    system["type"] = json!(["string", "null"]);
    properties.insert("system".into(), system);
    for parameter in &PARAMETERS {
        let mut schema = parameter.range.schema();
        schema["default"] = json!(parameter.default);
        schema["description"] = json!(parameter.meaning);
        properties.insert(parameter.field.into(), schema);
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": ["text"],
        "additionalProperties": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_text_alone_is_a_user_message_with_the_default_parameters() {
        let g = read(&data(json!({"text": "Hi"}))).unwrap();
        assert_eq!(g.prompt, chat_prompt([("user", "Hi")]));
        assert_eq!(g.params.max_tokens, 100);
        assert_eq!(g.params.temperature, 0.0);
        assert_eq!(g.params.top_k, 40);
        assert_eq!(g.params.repeat_penalty_last_n_token_count, 64);
    }

    #[test]
    fn a_system_message_and_parameters_are_used() {
        let g = read(&data(
            json!({"text": "Hi", "system": "Be brief.", "max_tokens": 8,
            "temperature": 0.5, "top_k": 0, "top_p": 1, "repeat_penalty": 1.0,
            "repeat_penalty_last_n": 0}),
        ))
        .unwrap();
        assert_eq!(
            g.prompt,
            chat_prompt([("system", "Be brief."), ("user", "Hi")])
        );
        let p = &g.params;
        assert_eq!(
            (p.max_tokens, p.top_k, p.repeat_penalty_last_n_token_count),
            (8, 0, 0)
        );
        assert_eq!((p.temperature, p.top_p, p.repeat_penalty), (0.5, 1.0, 1.0));
    }

    #[test]
    fn bad_values_are_refused_naming_the_field() {
        for (bad, field) in [
            (json!({}), "data.text"),
            (json!({"text": "  "}), "data.text"),
            (json!({"text": 3}), "data.text"),
            (json!({"text": "a<|im_end|>b"}), "data.text"),
            (json!({"text": "Hi", "system": ""}), "data.system"),
            (json!({"text": "Hi", "max_tokens": 0}), "data.max_tokens"),
            (json!({"text": "Hi", "max_tokens": 1025}), "data.max_tokens"),
            (json!({"text": "Hi", "max_tokens": 8.5}), "data.max_tokens"),
            (json!({"text": "Hi", "max_tokens": "8"}), "data.max_tokens"),
            (
                json!({"text": "Hi", "temperature": -0.1}),
                "data.temperature",
            ),
            (json!({"text": "Hi", "top_k": -1}), "data.top_k"),
            (json!({"text": "Hi", "top_p": 0}), "data.top_p"),
            (json!({"text": "Hi", "top_p": 1.5}), "data.top_p"),
            (
                json!({"text": "Hi", "repeat_penalty": 0}),
                "data.repeat_penalty",
            ),
            (
                json!({"text": "Hi", "repeat_penalty_last_n": 4096}),
                "data.repeat_penalty_last_n",
            ),
            (json!({"text": "Hi", "seed": 1}), "data.seed"),
        ] {
            let e = read(&data(bad.clone())).unwrap_err();
            assert_eq!(e.status, 400, "{bad}");
            assert!(e.message.contains(field), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn the_schema_lists_every_field_read() {
        let schema = data_schema();
        let listed: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        let mut fields = FIELDS.to_vec();
        fields.sort();
        assert_eq!(listed, fields);
        assert_eq!(schema["properties"]["max_tokens"]["maximum"], MAX_TOKENS);
        assert_eq!(schema["properties"]["top_p"]["exclusiveMinimum"], 0.0);
    }
}
