//! Layer 1, process plumbing: what every other part of the host may use, knowing nothing of
//! components or HTTP.

pub mod duration;
pub mod heap;
pub mod hostname;
pub mod log_writer;
pub mod private;
pub mod request_log;
pub mod signals;
pub mod stop;
pub mod systemd;
pub mod task;
pub mod token;
