//! Layer 7, the commands: one module per subcommand, each with its flags (a clap struct
//! that flattens the flags of the layers it uses, as Spin's commands do) and a `run` that
//! composes the services and decides how the command ends.
//!
//! Services: [`serve`], [`registry`], [`model`], [`up`]. Tools: [`check`], [`predict`],
//! [`chats`] (clients of running services, over their own crates), [`snapshot`],
//! [`compile`], and [`prepare`], the child process other commands leave cold work to.

pub mod chats;
pub mod check;
pub mod compile;
pub mod model;
pub mod predict;
pub mod prepare;
pub mod registry;
pub mod serve;
pub mod snapshot;
pub mod up;
