//! Layer 4, running a component: one engine per process or service ([`engine`]), the
//! imports every component may use linked in, compiled code cached on disk
//! ([`compiled`], in a cache whose rules are [`cache`]'s)
//! and Cranelift's functions kept for reuse ([`function_cache`]), pre-initialized snapshots
//! ([`preinit`]), what one instance's store holds ([`state`]), the per-request limits
//! ([`limits`]), and the flags that set all of these ([`flags`]). Nothing here knows of HTTP
//! servers or deployments.

pub mod cache;
pub mod compiled;
pub mod component_file;
pub mod engine;
pub mod flags;
pub mod function_cache;
pub mod limits;
pub mod preinit;
pub mod state;
