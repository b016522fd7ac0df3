//! A newcomer's first hour (issue 46): what a new user ran into following the README, each
//! tried as they did it. Start-up never drops a model ([`startup`]); every answer has the
//! right flags ([`ranges`]); bringing a model is quick ([`own_model`]), its manifest written
//! and checked like a deploy ([`init_and_check`]), and one that cannot serve says why
//! ([`deploy_errors`]); mistakes get the message that helps ([`mistakes`]).

mod deploy_errors;
mod init_and_check;
mod mistakes;
mod own_model;
mod ranges;
mod startup;
