//! The web console (components/console) on `up`'s app port, driven in a real headless
//! Chromium where one is installed.

mod app;
mod pictures;
