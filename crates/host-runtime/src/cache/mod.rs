//! The compile cache on disk, and the rules that make it safe to run code from: which
//! directory may be used at all ([`dir`]), how its files are written and read back
//! ([`file`]), and the lock that lets one process make a file while others wait for it
//! ([`lock`]). What goes into it is [`super::compiled`]'s and [`super::preinit`]'s business.

pub mod dir;
pub mod file;
pub mod lock;
