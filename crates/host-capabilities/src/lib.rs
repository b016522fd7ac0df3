//! Layer 3, the host's capabilities: what a component may import beside WASI 0.2 and
//! wasi-http, each as Spin provides it (Spin's factors), one module with one job each: its
//! linker function, the host side of its interface, and the context an instance lends it.
//!
//! - [`keyvalue`]: `wasi:keyvalue` over the stores the runtime config names;
//! - [`variables`]: `wasi:config/store`, the application's variables;
//! - [`files`]: read-only directory mounts, as Spin's `files = [...]`;
//! - [`llm`]: `fermyon:spin/llm`, embeddings run natively;
//! - [`outbound`]: outgoing HTTP, only to the hosts `allowed_outbound_hosts` admits;
//! - [`bindings`]: the host bindings of those interfaces, generated from the WIT inside
//!   `spin-sdk`.
//!
//! A new capability is a module here and one line in the linker (`runtime::engine`).

pub mod bindings;
pub mod files;
pub mod keyvalue;
pub mod llm;
pub mod outbound;
pub mod variables;
