//! `GET /depict.svg?smiles=...`: a molecule drawn as SVG (`chem::depict`), so every page of
//! the console (and any `<img>`) shows structures the same under Spin and `runtime-host`.
//! A SMILES the parser refuses is a 400 whose JSON names the position it stopped at.

use guest_kit::http::{self, ApiRequest, Response};
use guest_kit::{ApiError, ErrorCode};

/// Longer SMILES are refused: drug-like ones are well under 200 characters, and layout
/// time grows with the square of the atoms.
pub const MAX_SMILES: usize = 1000;

/// Pictures depend only on the URL: browsers may keep them for a day.
const CACHE_CONTROL: &str = "public, max-age=86400";

/// A drawing holds no script and loads nothing; this says so to the browser too.
const SVG_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'";

pub fn depict(req: &ApiRequest, head: bool) -> Result<Response, ApiError> {
    let smiles = req.required_query("smiles", "SMILES")?;
    let smiles = smiles.trim();
    if smiles.is_empty() {
        return Err(ApiError::new(
            ErrorCode::InvalidField,
            "smiles is empty: give the SMILES to draw",
        ));
    }
    if smiles.chars().count() > MAX_SMILES {
        return Err(ApiError::new(
            ErrorCode::InputTooLong,
            format!(
                "smiles is longer than {MAX_SMILES} characters; this drawing service stops there"
            ),
        ));
    }
    let mol = match chem::smiles::parse(smiles) {
        Ok(mol) => mol,
        Err(e) => return Ok(parse_error(&e)),
    };
    let svg = chem::depict::to_svg(&mol, smiles);
    let body = if head { Vec::new() } else { svg.into_bytes() };
    Ok(Response::builder()
        .status(200)
        .header("content-type", "image/svg+xml")
        .header("cache-control", CACHE_CONTROL)
        .header("x-content-type-options", "nosniff")
        .header("content-security-policy", SVG_POLICY)
        .body(body)
        .build())
}

/// 400 with the specification's error body (exactly its three fields, as every error of
/// these services) and the position in a header of its own, `smiles-error-position`
/// (1-based; absent when the parser names none).
fn parse_error(e: &chem::Error) -> Response {
    let err = ApiError::new(
        ErrorCode::InvalidField,
        format!("invalid SMILES: {}", e.message),
    );
    let mut response = http::error(&err);
    if let Some(position) = e.position {
        response.set_header(POSITION_HEADER, position.to_string());
    }
    response
}

/// The header that names where the parser stopped.
pub const POSITION_HEADER: &str = "smiles-error-position";
