//! The error body every endpoint answers with when something goes wrong.
//!
//! The specification (section 7) requires `{"success": false, "error", "error_code"}` of
//! interfaces B and C; docs/DESIGN.md extends it to the chat interface for consistency. The set of
//! codes is ours (the spec leaves it open); each one is documented in the README.

use serde::{Deserialize, Serialize};

/// The response header that repeats an error answer's `error_code`, so a host can count
/// errors by code without reading bodies (`runtime-host`'s Prometheus metrics).
pub const ERROR_CODE_HEADER: &str = "x-error-code";

/// Machine-readable error codes. Each has a default HTTP status ([`ErrorCode::status`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The body is not valid JSON (syntax error, truncated, wrong encoding).
    InvalidJson,
    /// A required field or query parameter is absent.
    MissingField,
    /// A field is present but has the wrong type or an unacceptable value.
    InvalidField,
    /// `/predict` named an `input_type` the model does not list.
    UnsupportedInputType,
    /// The input is longer than the model accepts.
    InputTooLong,
    /// An image or a sound sent inline is not valid base64.
    InvalidBase64,
    /// An image or a sound in a format the model cannot decode (or not an image or sound).
    UnsupportedMedia,
    /// An image or a sound whose file ends before its data does.
    TruncatedMedia,
    /// An image or a sound larger than the model accepts (bytes, pixels or duration), refused
    /// before it is decoded.
    MediaTooLarge,
    /// A URL input that could not be fetched (unreachable, an error status, too slow).
    FetchFailed,
    /// A URL input whose host the deployment may not reach (its allowed outbound hosts, or
    /// an address on this machine or its private network).
    UrlNotAllowed,
    /// The request body is larger than the configured cap.
    PayloadTooLarge,
    /// No such route or record.
    NotFound,
    /// The route exists but not for this method.
    MethodNotAllowed,
    /// A write needs `Authorization: Bearer <token>` and none was sent.
    Unauthorized,
    /// The bearer token does not match.
    Forbidden,
    /// The chat write API is disabled because no admin token is configured.
    WriteApiDisabled,
    /// A record with this identifier already exists.
    AlreadyExists,
    /// The registry has no live registration for this port.
    NotRegistered,
    /// The `registration_id` does not belong to this port.
    RegistrationMismatch,
    /// Every assignable port is taken.
    NoPortsAvailable,
    /// `/shutdown` is disabled for this deployment.
    ShutdownDisabled,
    /// The model has not finished loading or failed its self-test.
    NotReady,
    /// The request ran past its deadline.
    Timeout,
    /// The component tried to grow its memory past the configured cap.
    MemoryLimitExceeded,
    /// The host is at its concurrency limit; retry shortly.
    Overloaded,
    /// The key-value store failed; nothing was changed.
    StoreError,
    /// A record changed under every attempt to update it; nothing was changed, retry later.
    StoreContention,
    /// The key-value store did not answer or refused the operation (e.g. Redis is down);
    /// retry later.
    StoreUnavailable,
    /// The store offers no atomic change (its compare-and-swap cannot be trusted and its
    /// increments fail), so no update can be made safely; configure another store.
    StoreCasBroken,
    /// Anything else: a fault in the service, never the caller's mistake.
    InternalError,
}

impl ErrorCode {
    /// Every code, for documentation and tests.
    pub const ALL: [ErrorCode; 31] = [
        Self::InvalidJson,
        Self::MissingField,
        Self::InvalidField,
        Self::UnsupportedInputType,
        Self::InputTooLong,
        Self::InvalidBase64,
        Self::UnsupportedMedia,
        Self::TruncatedMedia,
        Self::MediaTooLarge,
        Self::FetchFailed,
        Self::UrlNotAllowed,
        Self::PayloadTooLarge,
        Self::NotFound,
        Self::MethodNotAllowed,
        Self::Unauthorized,
        Self::Forbidden,
        Self::WriteApiDisabled,
        Self::AlreadyExists,
        Self::NotRegistered,
        Self::RegistrationMismatch,
        Self::NoPortsAvailable,
        Self::ShutdownDisabled,
        Self::NotReady,
        Self::Timeout,
        Self::MemoryLimitExceeded,
        Self::Overloaded,
        Self::StoreError,
        Self::StoreContention,
        Self::StoreUnavailable,
        Self::StoreCasBroken,
        Self::InternalError,
    ];

    /// The snake_case string sent as `error_code`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidJson => "invalid_json",
            Self::MissingField => "missing_field",
            Self::InvalidField => "invalid_field",
            Self::UnsupportedInputType => "unsupported_input_type",
            Self::InputTooLong => "input_too_long",
            Self::InvalidBase64 => "invalid_base64",
            Self::UnsupportedMedia => "unsupported_media",
            Self::TruncatedMedia => "truncated_media",
            Self::MediaTooLarge => "media_too_large",
            Self::FetchFailed => "fetch_failed",
            Self::UrlNotAllowed => "url_not_allowed",
            Self::PayloadTooLarge => "payload_too_large",
            Self::NotFound => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::Unauthorized => "unauthorized",
            Self::Forbidden => "forbidden",
            Self::WriteApiDisabled => "write_api_disabled",
            Self::AlreadyExists => "already_exists",
            Self::NotRegistered => "not_registered",
            Self::RegistrationMismatch => "registration_mismatch",
            Self::NoPortsAvailable => "no_ports_available",
            Self::ShutdownDisabled => "shutdown_disabled",
            Self::NotReady => "not_ready",
            Self::Timeout => "timeout",
            Self::MemoryLimitExceeded => "memory_limit_exceeded",
            Self::Overloaded => "overloaded",
            Self::StoreError => "store_error",
            Self::StoreContention => "store_contention",
            Self::StoreUnavailable => "store_unavailable",
            Self::StoreCasBroken => "store_cas_broken",
            Self::InternalError => "internal_error",
        }
    }

    /// The HTTP status this code is answered with unless a caller has a reason to differ.
    pub fn status(self) -> u16 {
        match self {
            Self::InvalidJson
            | Self::MissingField
            | Self::InvalidField
            | Self::UnsupportedInputType
            | Self::InputTooLong
            | Self::InvalidBase64
            | Self::UnsupportedMedia
            | Self::TruncatedMedia
            | Self::MediaTooLarge
            | Self::FetchFailed
            | Self::UrlNotAllowed => 400,
            Self::Unauthorized => 401,
            Self::Forbidden
            | Self::WriteApiDisabled
            | Self::RegistrationMismatch
            | Self::ShutdownDisabled => 403,
            Self::NotFound | Self::NotRegistered => 404,
            Self::MethodNotAllowed => 405,
            Self::AlreadyExists => 409,
            Self::PayloadTooLarge => 413,
            Self::NoPortsAvailable
            | Self::NotReady
            | Self::Overloaded
            | Self::StoreContention
            | Self::StoreUnavailable
            | Self::StoreCasBroken => 503,
            Self::Timeout | Self::MemoryLimitExceeded | Self::StoreError | Self::InternalError => {
                500
            }
        }
    }

    /// Parses a wire string back into a code (`None` for codes this crate does not know).
    pub fn from_wire(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `{"success": false, "error": "...", "error_code": "..."}`.
///
/// `error_code` is kept as a string so that a client can read error bodies of other
/// implementations whose codes this crate does not know.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub success: bool,
    pub error: String,
    pub error_code: String,
}

impl ErrorBody {
    pub fn new(code: ErrorCode, error: impl Into<String>) -> Self {
        Self {
            success: false,
            error: error.into(),
            error_code: code.as_str().to_owned(),
        }
    }

    /// The code, if it is one of ours.
    pub fn code(&self) -> Option<ErrorCode> {
        ErrorCode::from_wire(&self.error_code)
    }

    /// Serialised JSON; cannot fail for this shape.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("error body always serialises")
    }
}

/// An error on its way to becoming a response: code, message and status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub code: ErrorCode,
    pub message: String,
}

impl ApiError {
    /// An error with the code's default status.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status: code.status(),
            code,
            message: message.into(),
        }
    }

    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody::new(self.code, self.message.clone())
    }

    pub fn missing(field: &str) -> Self {
        Self::new(ErrorCode::MissingField, format!("missing field `{field}`"))
    }

    pub fn invalid(field: &str, why: impl std::fmt::Display) -> Self {
        Self::new(
            ErrorCode::InvalidField,
            format!("invalid field `{field}`: {why}"),
        )
    }

    pub fn not_found(what: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, what)
    }

    pub fn internal(what: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::InternalError, format!("internal error: {what}"))
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.status, self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.as_str()), "duplicate {code}");
            assert_eq!(ErrorCode::from_wire(code.as_str()), Some(code));
            assert!((400..600).contains(&code.status()));
        }
    }

    #[test]
    fn body_has_exactly_the_three_spec_fields() {
        let json = ErrorBody::new(ErrorCode::NotFound, "dialog not found").to_json();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let obj = v.as_object().unwrap();
        assert_eq!(obj.len(), 3);
        assert_eq!(obj["success"], false);
        assert_eq!(obj["error"], "dialog not found");
        assert_eq!(obj["error_code"], "not_found");
    }
}
