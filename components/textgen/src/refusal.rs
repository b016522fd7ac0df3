//! What the host's refusals of `infer` become: the caller's mistake (400 with the host's own
//! words), a busy model (503 with `Retry-After`, so a client knows to come back), a host
//! without the language model (Spin's own engine: 503 `not_ready` saying how to give Spin
//! runtime-host's), or a fault (500).
//!
//! The SDK answers a [`PredictError::Invalid`] with its error's own status (503 included)
//! but has no way to add a header, so a busy refusal is remembered for the request under
//! way and [`stamp_retry_after`] puts the header on the finished answer.

use edge_api::language_model::MODEL;
use model_sdk::{ApiError, ErrorCode, PredictError, Response};
use spin_sdk::llm;
use std::sync::atomic::{AtomicU64, Ordering};

/// How `runtime-host` begins the message of a full queue; the message ends with the seconds
/// to wait ("... try again in 2 s").
const BUSY: &str = "the model is busy";
/// Where the seconds are in that message.
const WAIT: &str = "try again in ";
/// What Spin's own LLM engine says of a model it has no files for; Spin 4 has none for
/// SmolLM2 and is to send its LLM calls to runtime-host instead.
const SPIN_HAS_NO_MODEL: &str = "no model directory";

/// Seconds a busy refusal of the request under way asked the caller to wait; 0 for none. An
/// instance may serve several requests one after another, so each request starts with
/// [`forget_busy`].
static RETRY_AFTER: AtomicU64 = AtomicU64::new(0);

/// What `infer`'s error means for the request.
pub fn predict_error(e: llm::Error) -> PredictError {
    match e {
        llm::Error::ModelNotSupported => PredictError::Fault(format!(
            "the host does not give this component the AI model `{MODEL}`: grant it with \
             `ai_models = [\"{MODEL}\"]` in spin.toml, or `--ai-model {MODEL}` to runtime-host"
        )),
        // Not the caller's mistake nor a fault of this model: the deployment has yet to be
        // given the language model. Spin 4 reports it as invalid input; either kind is read.
        llm::Error::InvalidInput(m) | llm::Error::RuntimeError(m)
            if m.contains(SPIN_HAS_NO_MODEL) =>
        {
            PredictError::Invalid(ApiError::new(
                ErrorCode::NotReady,
                format!(
                    "the language model `{MODEL}` is not available here ({m}): under Spin, send \
                     its LLM calls to runtime-host with a runtime configuration file (`spin up \
                     --runtime-config-file`) holding `[llm_compute]` with `type = \"remote_http\"`, \
                     `url` = `runtime-host up`'s app port and `auth_token` = its \
                     `.data/llm_api_token` (docs/spin.md)"
                ),
            ))
        }
        llm::Error::InvalidInput(m) => {
            // The host counts the prompt's tokens; too many for the context is a long input.
            let code = match m.contains("context") {
                true => ErrorCode::InputTooLong,
                false => ErrorCode::InvalidField,
            };
            PredictError::Invalid(ApiError::new(code, m))
        }
        llm::Error::RuntimeError(m) if m.starts_with(BUSY) => {
            RETRY_AFTER.store(wait_in(&m).unwrap_or(1), Ordering::Relaxed);
            PredictError::Invalid(ApiError::new(ErrorCode::Overloaded, m))
        }
        llm::Error::RuntimeError(m) => PredictError::Fault(m),
    }
}

/// The whole seconds `message` asks to wait, if it says.
fn wait_in(message: &str) -> Option<u64> {
    let (_, after) = message.split_once(WAIT)?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok().filter(|s| *s > 0)
}

/// Starts a request with no busy refusal remembered.
pub fn forget_busy() {
    RETRY_AFTER.store(0, Ordering::Relaxed);
}

/// `Retry-After` on a 503 that a busy model caused, with the seconds the host named.
pub fn stamp_retry_after(resp: &mut Response) {
    let seconds = RETRY_AFTER.load(Ordering::Relaxed);
    if *resp.status() == 503 && seconds > 0 {
        resp.set_header("retry-after", seconds.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_gets_its_status() {
        let status = |e| match predict_error(e) {
            PredictError::Invalid(e) => (e.status, e.code),
            PredictError::Fault(_) => (500, ErrorCode::InternalError),
            PredictError::Failed(_) => (200, ErrorCode::InternalError),
        };
        let long = "the prompt is 2100 tokens and max-tokens is 8: together they exceed the \
                    model's context of 2048 tokens";
        assert_eq!(
            status(llm::Error::InvalidInput(long.into())),
            (400, ErrorCode::InputTooLong)
        );
        assert_eq!(
            status(llm::Error::InvalidInput("top-p 2 is outside (0, 1]".into())),
            (400, ErrorCode::InvalidField)
        );
        assert_eq!(
            status(llm::Error::RuntimeError("loading failed".into())),
            (500, ErrorCode::InternalError)
        );
        assert_eq!(
            status(llm::Error::ModelNotSupported),
            (500, ErrorCode::InternalError)
        );
        let spin = "no model directory found in registry for model 'smollm2-135m-instruct'";
        for refused in [
            predict_error(llm::Error::InvalidInput(spin.into())),
            predict_error(llm::Error::RuntimeError(spin.into())),
        ] {
            let PredictError::Invalid(e) = refused else {
                panic!("{refused:?}")
            };
            assert_eq!((e.status, e.code), (503, ErrorCode::NotReady));
            assert!(e.message.contains(spin), "{}", e.message);
            assert!(
                e.message.contains("type = \"remote_http\""),
                "{}",
                e.message
            );
        }
        forget_busy();
        let busy = "the model is busy: every stream is taken and the queue is full; try again \
                    in 2 s";
        assert_eq!(
            status(llm::Error::RuntimeError(busy.into())),
            (503, ErrorCode::Overloaded)
        );
        assert_eq!(RETRY_AFTER.load(Ordering::Relaxed), 2);
        forget_busy();
    }

    #[test]
    fn the_wait_is_read_from_the_message() {
        assert_eq!(wait_in("the model is busy; try again in 12 s"), Some(12));
        assert_eq!(wait_in("the model is busy"), None);
        assert_eq!(wait_in("try again in 0 s"), None);
    }
}
