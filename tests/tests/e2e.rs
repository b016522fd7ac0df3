//! Every end-to-end scenario, one module each, in one test binary.
//!
//! One binary instead of one per file: each of the 34 binaries compiled and linked its own
//! copy of the harness's generic code (the HTTP client, tokio, serde), about 14 s of CPU
//! apiece in a cold release build. `cargo xtask test` still runs each module as a process of
//! its own, several at a time (its runner lists the tests and groups them by module), so a
//! scenario's servers, static state and timing are as separate as before. By hand:
//! `cargo test --release -p e2e-tests --test e2e -- chat_api::` runs one module.

mod adversarial;
mod batch;
mod bench_smoke;
mod chat_api;
mod chat_data;
mod chat_hostile;
mod chat_reply;
mod compile_cache;
mod conformance;
mod console;
mod console_pictures;
mod embeddings;
mod first_hour;
mod fleet;
mod fleet_files;
mod host_edges;
mod host_limits;
mod host_services;
mod hot_deploy;
mod installation;
mod llm_api;
mod media_models;
mod metrics;
mod model_lifecycle;
mod model_openapi;
mod molprop;
mod oip;
mod oip_check;
mod oip_clients;
mod onnx_models;
mod openapi;
mod openapi_properties;
mod outbound;
mod predict_cli;
mod private_data;
mod redis_store;
mod registry;
mod registry_ownership;
mod schemathesis;
mod snapshots;
mod spin_app;
mod spin_registry_lock;
mod spin_stores;
mod spinkube_manifest;
mod stack_up;
mod startup;
mod textgen;
mod tiers;
mod warm_instances;
