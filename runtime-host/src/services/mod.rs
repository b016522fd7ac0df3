//! Layer 6, the services: what a deployment is, shared by the commands, built on the host's
//! lower layers (the `host-core` crate).
//!
//! - [`launch`]: a component launched as a service, the one path every command takes;
//! - [`installation`]: where this program's own components and default models are;
//! - [`tiers`]: a new component served from baseline code until its optimized code is ready;
//! - [`announce`]: what a service command prints and opens first;
//! - [`model`]: a model deployment (interface B) and its v1.2 lifecycle;
//! - [`registry`]: the port registry (interface C) with caller identification
//!   ([`caller`]) and process monitoring;
//! - [`chat`]: the chat service (interface A) as `up` starts it;
//! - [`deployments`]: the models a stack runs, deployed at start and managed while it runs
//!   (added, upgraded, removed), with their admin API, `/health` and the Open Inference
//!   Protocol's server routes;
//! - [`stack`]: the whole local stack in one process (`up`): registry, chat, the models and
//!   the app port, started in order and stopped in order;
//! - [`app`]: the services on one port, routed as `spin.toml` routes them;
//! - [`metrics_endpoint`]: the host's metrics served to Prometheus;
//! - [`llm_api`]: the AI models over HTTP (OpenAI's endpoints, Spin's remote LLM protocol).

pub mod announce;
pub mod app;
pub mod caller;
pub mod chat;
pub mod deployments;
pub mod installation;
pub mod launch;
pub mod llm_api;
pub mod metrics_endpoint;
pub mod model;
pub mod registry;
pub mod stack;
pub mod tiers;
