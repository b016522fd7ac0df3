//! The write API's bearer-token check.

use guest_kit::{ApiError, ApiRequest, ErrorCode, config};

/// Name of the application variable holding the admin token.
pub const TOKEN_VARIABLE: &str = "chat_admin_token";

/// Allows the request only with `Authorization: Bearer <chat_admin_token>`.
///
/// 403 `write_api_disabled` when no token is configured, 401 without a token, 403 with a
/// wrong one. Checked before the body is looked at, so an unauthenticated caller learns
/// nothing about the data.
pub fn require_admin(req: &ApiRequest) -> Result<(), ApiError> {
    let Some(expected) = config::non_empty(TOKEN_VARIABLE)? else {
        return Err(ApiError::new(
            ErrorCode::WriteApiDisabled,
            format!(
                "the chat write API is disabled; set the `{TOKEN_VARIABLE}` variable to enable it"
            ),
        ));
    };
    match req.bearer_token() {
        None => Err(ApiError::new(
            ErrorCode::Unauthorized,
            "this operation needs an `Authorization: Bearer <token>` header",
        )),
        Some(given) if constant_time_eq(given.as_bytes(), expected.as_bytes()) => Ok(()),
        Some(_) => Err(ApiError::new(
            ErrorCode::Forbidden,
            "the bearer token is not valid",
        )),
    }
}

/// Compares without an early exit, so response timing does not leak the token's prefix.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
