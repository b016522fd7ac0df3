//! The project under the real Spin (`spin up`) and on its stores, and the SpinKube manifest:
//! what holds for Spin deployments rather than for `runtime-host`.

mod app;
mod build;
mod plain_up;
mod registry_lock;
mod spinkube;
mod stores;
