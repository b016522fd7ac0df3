//! The request's caller, as the native host vouches for it ([`registry_core::caller`]).

use crate::settings::maintenance_token;
use guest_kit::ApiError;
use guest_kit::http::ApiRequest;
use registry_core::caller::{HEADER, Identity};

pub fn identity(req: &ApiRequest) -> Result<Identity, ApiError> {
    let secret = maintenance_token()?;
    Ok(Identity::parse(secret.as_deref(), req.header(HEADER)))
}
