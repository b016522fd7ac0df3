//! The commands beside serving and the checks around the documents: `runtime-host check`
//! (also `--oip`) and `predict`, a newcomer's first hour with `init`, the bench's smoke run,
//! and the OpenAPI documents held to the real servers (by our own tests and by schemathesis).

mod bench;
mod check;
mod check_oip;
mod first_hour;
mod openapi;
mod openapi_properties;
mod package;
mod predict;
mod schemathesis;
