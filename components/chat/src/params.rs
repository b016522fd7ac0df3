//! The body of `POST /api/dialog/reply`: how the reply is generated, every field optional.
//! The names are Spin's `inferencing-params` in snake case (as OpenAI's `max_tokens`,
//! `temperature` and `top_p` are too); values the model cannot use are refused here with a
//! 400 naming the field, before any work is done.

use edge_api::ApiError;
use serde::Deserialize;
use serde_json::Number;
use spin_sdk::llm::InferencingParams;

/// Tokens a reply may have when the body does not say: a few sentences.
pub const DEFAULT_MAX_TOKENS: u32 = 128;
/// The most a reply may ask for: `runtime-host`'s limit per request.
pub const MAX_TOKENS: u32 = 1024;
/// The highest temperature accepted (past 2 a small model writes noise).
pub const MAX_TEMPERATURE: f64 = 2.0;

/// The request body as sent.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplyParams {
    max_tokens: Option<Number>,
    temperature: Option<f64>,
    top_k: Option<Number>,
    top_p: Option<f64>,
    repeat_penalty: Option<f64>,
    repeat_penalty_last_n_token_count: Option<Number>,
}

impl ReplyParams {
    /// Reads the body: none (or only whitespace) is every default.
    pub fn from_body(body: &[u8]) -> Result<Self, ApiError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self::default());
        }
        edge_api::json::parse_body(body)
    }

    /// The parameters for `infer`: Spin's defaults where the body says nothing, but
    /// [`DEFAULT_MAX_TOKENS`]; 400 for a value out of its range.
    pub fn checked(&self) -> Result<InferencingParams, ApiError> {
        let spin = InferencingParams::default();
        let max_tokens = whole(
            &self.max_tokens,
            DEFAULT_MAX_TOKENS,
            1,
            MAX_TOKENS,
            "max_tokens",
        )?;
        let temperature = number(self.temperature, spin.temperature, "temperature", |t| {
            (0.0..=MAX_TEMPERATURE).contains(&t)
        })
        .map_err(|field| {
            ApiError::invalid(
                field,
                format!("must be from 0 (always the likeliest token) to {MAX_TEMPERATURE}"),
            )
        })?;
        let top_p = number(self.top_p, spin.top_p, "top_p", |p| p > 0.0 && p <= 1.0)
            .map_err(|field| ApiError::invalid(field, "must be above 0 and at most 1"))?;
        let repeat_penalty = number(
            self.repeat_penalty,
            spin.repeat_penalty,
            "repeat_penalty",
            |r| r > 0.0 && r <= 10.0,
        )
        .map_err(|field| ApiError::invalid(field, "must be above 0 and at most 10 (1 is none)"))?;
        let context = edge_api::language_model::CONTEXT_TOKENS as u32;
        let last_n = whole(
            &self.repeat_penalty_last_n_token_count,
            spin.repeat_penalty_last_n_token_count,
            0,
            context,
            "repeat_penalty_last_n_token_count",
        )?;
        let top_k = whole(&self.top_k, spin.top_k, 0, u32::MAX, "top_k")?;
        Ok(InferencingParams {
            max_tokens,
            repeat_penalty,
            repeat_penalty_last_n_token_count: last_n,
            temperature,
            top_k,
            top_p,
        })
    }
}

/// `given` (or `default`) when it is a whole number from `min` to `max`, written any way JSON
/// Schema's `integer` allows (`8` or `8.0`, as the OpenAPI document's type says); else 400.
fn whole(
    given: &Option<Number>,
    default: u32,
    min: u32,
    max: u32,
    field: &str,
) -> Result<u32, ApiError> {
    let Some(n) = given else {
        return Ok(default);
    };
    let value = match (n.as_u64(), n.as_f64()) {
        (Some(u), _) => u32::try_from(u).ok(),
        (None, Some(f)) if f.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&f) => {
            Some(f as u32)
        }
        _ => None,
    };
    value.filter(|v| (min..=max).contains(v)).ok_or_else(|| {
        ApiError::invalid(field, format!("must be a whole number from {min} to {max}"))
    })
}

/// `given` (or `default`) as the `f32` Spin takes, when `ok` accepts it; else the field's
/// name. JSON has no infinities or NaN, so only the range needs checking.
fn number(
    given: Option<f64>,
    default: f32,
    field: &'static str,
    ok: impl Fn(f64) -> bool,
) -> Result<f32, &'static str> {
    match given {
        None => Ok(default),
        Some(v) if ok(v) => Ok(v as f32),
        Some(_) => Err(field),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use edge_api::error::ErrorCode;

    fn parse(body: &str) -> Result<InferencingParams, ApiError> {
        ReplyParams::from_body(body.as_bytes())?.checked()
    }

    #[test]
    fn no_body_is_spins_defaults_with_a_short_reply() {
        let p = parse("").unwrap();
        let spin = InferencingParams::default();
        assert_eq!(p.max_tokens, DEFAULT_MAX_TOKENS);
        assert_eq!(
            (p.temperature, p.top_k, p.top_p),
            (spin.temperature, spin.top_k, spin.top_p)
        );
        assert_eq!(parse("{}").unwrap().max_tokens, DEFAULT_MAX_TOKENS);
        let p = parse(r#"{"max_tokens": 8, "temperature": 0, "top_k": 1}"#).unwrap();
        assert_eq!((p.max_tokens, p.temperature, p.top_k), (8, 0.0, 1));
        // JSON Schema's integers include 8.0.
        let p = parse(r#"{"max_tokens": 8.0, "top_k": 0.0}"#).unwrap();
        assert_eq!((p.max_tokens, p.top_k), (8, 0));
    }

    #[test]
    fn out_of_range_values_name_their_field() {
        for (body, field) in [
            (r#"{"max_tokens": 0}"#, "max_tokens"),
            (r#"{"max_tokens": 1025}"#, "max_tokens"),
            (r#"{"max_tokens": -1}"#, "max_tokens"),
            (r#"{"max_tokens": "8"}"#, "max_tokens"),
            (r#"{"max_tokens": 8.5}"#, "max_tokens"),
            (r#"{"top_k": 5000000000}"#, "top_k"),
            (r#"{"temperature": -0.1}"#, "temperature"),
            (r#"{"temperature": 2.5}"#, "temperature"),
            (r#"{"top_p": 0}"#, "top_p"),
            (r#"{"repeat_penalty": 0}"#, "repeat_penalty"),
            (
                r#"{"repeat_penalty_last_n_token_count": 4096}"#,
                "repeat_penalty_last_n_token_count",
            ),
            (r#"{"stream": true}"#, "stream"),
        ] {
            let e = parse(body).unwrap_err();
            assert_eq!(e.status, 400, "{body}");
            assert_eq!(e.code, ErrorCode::InvalidField, "{body}: {}", e.message);
            assert!(e.message.contains(field), "{body}: {}", e.message);
        }
        assert_eq!(parse("[1]").unwrap_err().status, 400);
        assert_eq!(parse("{").unwrap_err().code, ErrorCode::InvalidJson);
    }
}
