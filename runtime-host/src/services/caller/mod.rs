//! Who is calling the registry: what only a native host can tell (docs/DECISIONS.md
//! "Registry ownership").
//!
//! On a loopback connection Linux knows the process at the other end: `sock_diag` netlink
//! maps the connection to a socket inode ([`socket`]), and `/proc/<pid>/fd` shows which
//! process holds it ([`tree`]), found once per connection. The registry then lets a process
//! register itself, its ancestors or its descendants (a launcher registering the model it
//! started), and renew without the registration id only the registration of a process it
//! is related to. Callers that cannot be known (another machine, another user's process we
//! may not inspect) are named as such and get the stricter rules.
//!
//! The answer goes to the component in one request header (`registry_core::caller::HEADER`,
//! written and read by `registry_core::caller`), vouched for by a secret the host generates
//! at each start (the component's `registry_maintenance_token`), added by [`CallerHook`]: the
//! host removes the header from every incoming request (`host_core::http::guard`), so a
//! client cannot forge it, and under Spin, where no one vouches, the component ignores it.

mod hook;
mod identify;
mod socket;
mod tree;

pub use hook::CallerHook;
