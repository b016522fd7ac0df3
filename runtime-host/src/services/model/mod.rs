//! What a model deployment (interface B) is, for every command that runs one: its files
//! ([`spec`]) and their versions ([`versions`]), its self-test ([`self_test`]), its side of
//! the registry ([`registration`], with busy ports guarded: [`port_guard`]), what the host
//! adds to its requests ([`hooks`], with the API key: [`api_key`]), and the v1.2 lifecycle that ties them together
//! ([`lifecycle`]).

pub mod api_key;
pub mod check;
pub mod hooks;
pub mod init;
pub mod lifecycle;
pub mod manifest;
pub mod port_guard;
pub mod registration;
pub mod self_test;
pub mod spec;
pub mod versions;
