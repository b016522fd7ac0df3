//! Interface C, the registry service (components/registry), as models and strangers meet it
//! over HTTP under `runtime-host`. How `runtime-host model` uses it is under
//! [`crate::models`]; the registry on Spin's stores under [`crate::spin`].

mod api;
mod ownership;
