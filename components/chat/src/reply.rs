//! `POST /api/dialog/reply?id=`: the assistant's next message, written by the language model
//! from the dialog so far (`fermyon:spin/llm` `infer`, the model the host or Spin serves as
//! [`MODEL`]) and stored as one more append.
//!
//! The dialog is read, the model writes, then the reply is appended by the same
//! compare-and-swap as every append ([`dialogs::append_to`]): messages appended while the
//! model was writing are kept, and the reply goes after them. Two replies asked for at once
//! both land, each once.

use crate::auth::require_admin;
use crate::dialogs;
use crate::params::ReplyParams;
use crate::prompt::{self, Window};
use crate::records::load;
use edge_api::chat::{Message, Role};
use edge_api::language_model::{CONTEXT_TOKENS, MODEL};
use edge_api::time::now_rfc3339;
use guest_kit::http::{self, ApiRequest, Response};
use guest_kit::kv::Store;
use guest_kit::{ApiError, ErrorCode};
use serde_json::json;
use spin_sdk::llm::{self, InferencingModel, InferencingParams, InferencingResult};
use uuid::Uuid;

/// Tries at making the prompt fit before the dialog is called too long (each one a
/// quarter fewer messages: from 10,000 messages to one in fewer than 40).
const MAX_TRIES: usize = 40;
/// What a caller turned away by a busy model is told to wait, in seconds (the host's own
/// advice, `runtime-host`'s `RETRY_AFTER_SECONDS`).
const RETRY_AFTER_SECONDS: u32 = 2;

pub fn reply(req: &ApiRequest) -> Result<Response, ApiError> {
    require_admin(req)?;
    let given = req.required_query("id", "dialog id")?;
    let params = ReplyParams::from_body(&req.body)?.checked()?;
    let store = Store::open_default()?;
    let dialog = load(&store, &given)?;
    if dialog.messages.is_empty() {
        return Err(ApiError::invalid(
            "id",
            format!(
                "dialog `{}` has no messages yet: append the user's message first",
                dialog.id
            ),
        ));
    }
    // A full dialog is refused before the model spends seconds on a reply it cannot keep.
    dialogs::check_room(&dialog)?;
    let (result, window) = match generate(&dialog.messages, params) {
        Ok(done) => done,
        Err(Refusal::Busy(err)) => {
            let mut resp = http::error(&err);
            resp.set_header("retry-after", RETRY_AFTER_SECONDS.to_string());
            return Ok(resp);
        }
        Err(Refusal::Error(err)) => return Err(err),
    };
    let now = now_rfc3339();
    let message = Message {
        id: Uuid::new_v4().to_string(),
        role: Role::Assistant,
        content: result.text.trim().to_owned(),
        created: now.clone(),
        name: None,
        model: Some(MODEL.to_owned()),
        metadata: None,
    };
    dialogs::append_to(&store, &dialog.id, message.clone(), &now)?;
    Ok(http::json(
        201,
        &json!({
            "message": message,
            "usage": {
                "promptTokens": result.usage.prompt_token_count,
                "generatedTokens": result.usage.generated_token_count,
            },
            "context": {
                "messagesUsed": window.used(),
                "messagesLeftOut": window.left_out,
            },
        }),
    ))
}

/// Why no reply was written.
enum Refusal {
    /// The model is serving as many callers as it can: 503 with `Retry-After`.
    Busy(ApiError),
    Error(ApiError),
}

/// The model's reply to the latest messages that fit its context, and which those were.
fn generate(
    messages: &[Message],
    params: InferencingParams,
) -> Result<(InferencingResult, Window<'_>), Refusal> {
    let mut keep = prompt::first_guess(messages, params.max_tokens as usize);
    for _ in 0..MAX_TRIES {
        let window = Window::new(messages, keep);
        match llm::infer_with_options(InferencingModel::Other(MODEL), &window.prompt(), params) {
            Ok(result) => return Ok((result, window)),
            Err(llm::Error::InvalidInput(why)) if past_the_context(&why) => {
                if keep <= 1 {
                    return Err(Refusal::Error(too_long(params.max_tokens, &why)));
                }
                keep = prompt::fewer(keep);
            }
            Err(e) => return Err(refusal(e)),
        }
    }
    Err(Refusal::Error(too_long(
        params.max_tokens,
        &format!("{MAX_TRIES} shorter prompts were tried"),
    )))
}

/// Whether the model refused the prompt as longer than its context (the host's words).
fn past_the_context(why: &str) -> bool {
    why.contains("context")
}

fn too_long(max_tokens: u32, why: &str) -> ApiError {
    ApiError::new(
        ErrorCode::InputTooLong,
        format!(
            "the dialog's latest message does not fit the language model's context of \
             {CONTEXT_TOKENS} tokens with max_tokens {max_tokens} ({why}); shorten that message \
             or the dialog's system message, or ask for fewer tokens"
        ),
    )
}

/// An error of `infer` as the caller gets it.
fn refusal(error: llm::Error) -> Refusal {
    let unavailable = |message: String| Refusal::Error(ApiError::new(ErrorCode::NotReady, message));
    match error {
        llm::Error::ModelNotSupported => unavailable(format!(
            "the chat service may not use the language model `{MODEL}`: grant it to the chat \
             component (`ai_models = [\"{MODEL}\"]` in spin.toml, `--ai-model {MODEL}` to \
             `runtime-host serve`; `runtime-host up` grants it) and install it with `cargo xtask \
             install-models`"
        )),
        llm::Error::RuntimeError(why) if why.contains("busy") => Refusal::Busy(ApiError::new(
            ErrorCode::Overloaded,
            format!("the language model is busy: {why}"),
        )),
        // runtime-host without the model's files.
        llm::Error::RuntimeError(why) if why.contains("not installed") => unavailable(why),
        // Spin's own engine, which has no such model (Spin 4.0.2 says so as invalid input):
        // Spin is to send its calls elsewhere.
        llm::Error::RuntimeError(why) | llm::Error::InvalidInput(why)
            if why.contains("no model directory") =>
        {
            unavailable(format!(
                "the language model `{MODEL}` is not available here ({why}): under Spin, send \
                 its LLM calls to runtime-host (`[llm_compute]` in the runtime configuration, \
                 docs/spin.md)"
            ))
        }
        llm::Error::RuntimeError(why) => Refusal::Error(ApiError::internal(format!(
            "the language model failed: {why}"
        ))),
        llm::Error::InvalidInput(why) => Refusal::Error(ApiError::invalid(
            "body",
            format!("the language model refused the request: {why}"),
        )),
    }
}
