//! Layer 5, serving HTTP to components: accepting connections ([`listener`], with each
//! connection's two ends in [`connection`]), what every request passes first ([`guard`]),
//! its id ([`request_id`]) and its log line ([`access_log`]),
//! the settings the whole process shares ([`settings`]), the header names the host reads and writes ([`headers`]), request bodies read whole
//! ([`body`]) within what the process may hold ([`held`]), the host's own answers
//! ([`responses`]), routing an app's paths as Spin does ([`router`]), a deployment's
//! replaceable place ([`slot`]), batches taking turns ([`lanes`]), and one component's
//! server ([`server`]): its limits, its
//! warm instances ([`instances`], [`release_order`]) and the hooks a service adds per
//! request ([`hooks`]).

pub mod access_log;
pub mod body;
pub mod connection;
pub mod guard;
pub mod headers;
pub mod held;
pub mod hooks;
pub mod instances;
pub mod lanes;
pub mod listener;
pub mod release_order;
pub mod request_id;
pub mod responses;
pub mod router;
pub mod server;
pub mod settings;
pub mod slot;
