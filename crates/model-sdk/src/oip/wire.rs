//! The inference request and response on the wire: the JSON header, and the binary tensor
//! data after it when `Inference-Header-Content-Length` says where the JSON ends.

use super::OipError;
use serde::Deserialize;
use serde_json::{Map, Value};

/// Triton's binary tensor data extension: the length of the JSON at the start of the body.
pub const HEADER_LENGTH: &str = "inference-header-content-length";

#[derive(Debug, Deserialize)]
pub struct InferRequest {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub parameters: Option<Map<String, Value>>,
    pub inputs: Vec<RequestInput>,
    #[serde(default)]
    pub outputs: Option<Vec<RequestOutput>>,
}

#[derive(Debug, Deserialize)]
pub struct RequestInput {
    pub name: String,
    pub shape: Vec<i64>,
    pub datatype: String,
    #[serde(default)]
    pub parameters: Option<Map<String, Value>>,
    #[serde(default)]
    pub data: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub struct RequestOutput {
    pub name: String,
    #[serde(default)]
    pub parameters: Option<Map<String, Value>>,
}

/// A request body split into its JSON header and binary data.
pub struct Body<'a> {
    pub request: InferRequest,
    pub binary: &'a [u8],
}

/// Splits and parses an inference request body. `header_length` is the value of
/// `Inference-Header-Content-Length`, if sent.
pub fn read<'a>(body: &'a [u8], header_length: Option<&str>) -> Result<Body<'a>, OipError> {
    let (json, binary) = match header_length {
        None => (body, &body[body.len()..]),
        Some(text) => {
            let n: usize = text.trim().parse().map_err(|_| {
                OipError::bad(format!(
                    "{HEADER_LENGTH} must be the JSON header's length in bytes, not {text:?}"
                ))
            })?;
            if n > body.len() {
                return Err(OipError::bad(format!(
                    "{HEADER_LENGTH} says {n} bytes of JSON, but the body has {}",
                    body.len()
                )));
            }
            body.split_at(n)
        }
    };
    let request = serde_json::from_slice(json)
        .map_err(|e| OipError::bad(format!("the inference request is not valid: {e}")))?;
    Ok(Body { request, binary })
}

/// A parameter that must be a boolean when present (`binary_data`, `binary_data_output`).
pub fn flag(parameters: Option<&Map<String, Value>>, name: &str) -> Result<Option<bool>, OipError> {
    match parameters.and_then(|p| p.get(name)) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(OipError::bad(format!(
            "parameter {name} must be true or false, not {other}"
        ))),
    }
}

/// A parameter that must be a whole number of bytes when present (`binary_data_size`).
pub fn size(
    parameters: Option<&Map<String, Value>>,
    name: &str,
) -> Result<Option<usize>, OipError> {
    match parameters.and_then(|p| p.get(name)) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| {
                OipError::bad(format!("parameter {name} must be a byte count, not {v}"))
            }),
    }
}
