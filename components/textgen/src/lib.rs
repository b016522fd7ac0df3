//! textgen: text generation as a Lightweight AI Model Runtime Interface 1.2 model
//! (capability `text-generation`, input type `text`).
//!
//! The network, SmolLM2-135M-Instruct, is not in the component: it asks the host through
//! Spin's `fermyon:spin/llm@2.0.0` `infer`, so one loaded copy of the weights serves every
//! instance, and the same component runs under `runtime-host` and under Spin pointed at a
//! host that runs the model. `infer` takes its prompt as it is; the component writes the
//! chat (the user's text, and a system message where the request gives one) in the model's
//! own chat format ([`edge_api::language_model::chat_prompt`]). What it owns is the request
//! contract: the fields, the parameters' ranges, and what each refusal of the host becomes.

mod describe;
mod refusal;
mod request;

use edge_api::language_model::MODEL;
use model_sdk::{InputType, Model, PredictError};
use serde_json::{Map, Value, json};
use spin_sdk::llm;

struct TextGen;

#[spin_sdk::http_component]
async fn handle(req: spin_sdk::http::IncomingRequest, out: model_sdk::ResponseOutparam) {
    refusal::forget_busy();
    let mut resp = model_sdk::serve(&TextGen, req).await;
    refusal::stamp_retry_after(&mut resp);
    model_sdk::respond(out, resp);
}

/// Most items one batch may hold: each is generated in turn (the host's `infer` answers one
/// prompt per call), within the SDK's time budget for a batch.
const MAX_BATCH: usize = 8;

/// One result: the text, the host's token counts, and why generation ended.
fn answer(generation: &request::Generation, done: &llm::InferencingResult) -> Value {
    let generated = done.usage.generated_token_count;
    // The end-of-turn token is not counted: a generation that reached max_tokens was cut.
    let finish = if generated >= generation.params.max_tokens {
        "length"
    } else {
        "stop"
    };
    json!({
        "text": done.text,
        "prompt_tokens": done.usage.prompt_token_count,
        "generated_tokens": generated,
        "finish_reason": finish,
        "model": MODEL,
    })
}

impl Model for TextGen {
    fn name(&self) -> &str {
        describe::NAME
    }
    fn info(&self) -> model_sdk::ModelInfo {
        describe::info()
    }
    fn capabilities(&self) -> model_sdk::Capabilities {
        describe::capabilities()
    }
    fn acceptable_ranges(&self) -> model_sdk::AcceptableRanges {
        describe::acceptable_ranges()
    }
    fn citation(&self) -> model_sdk::Citation {
        describe::citation()
    }
    fn test_examples(&self) -> model_sdk::TestExamples {
        describe::test_examples()
    }

    fn max_batch(&self) -> usize {
        MAX_BATCH
    }

    fn data_schema(&self) -> Value {
        request::data_schema()
    }

    /// An example's text with the request format's `max_tokens`, as a client filling the
    /// format in sends it: the self-test stays as quick as trying an example.
    fn example_request(&self, example: &model_sdk::Example) -> model_sdk::PredictionRequest {
        let mut data = example.input.clone();
        data.entry("max_tokens")
            .or_insert(json!(describe::EXAMPLE_MAX_TOKENS));
        model_sdk::PredictionRequest {
            input_type: "text".into(),
            data,
        }
    }

    fn predict(&self, _: InputType, data: &Map<String, Value>) -> Result<Value, PredictError> {
        let generation = request::read(data)?;
        let done = llm::infer_with_options(
            llm::InferencingModel::Other(MODEL),
            &generation.prompt,
            generation.params,
        )
        .map_err(refusal::predict_error)?;
        Ok(answer(&generation, &done))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generation_that_used_every_token_it_could_was_cut() {
        let generation =
            request::read(json!({"text": "Hi", "max_tokens": 4}).as_object().unwrap()).unwrap();
        let done = |n| llm::InferencingResult {
            text: "Hello".into(),
            usage: llm::InferencingUsage {
                prompt_token_count: 30,
                generated_token_count: n,
            },
        };
        let cut = answer(&generation, &done(4));
        assert_eq!(cut["finish_reason"], "length");
        assert_eq!(cut["prompt_tokens"], 30);
        assert_eq!(cut["generated_tokens"], 4);
        assert_eq!(answer(&generation, &done(3))["finish_reason"], "stop");
    }
}
