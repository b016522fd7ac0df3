//! `runtime-host` itself, whatever the component: its limits and HTTP edges, the host services
//! components call (key-value, variables and mounts, outgoing HTTP), compilation (tiers, the cache,
//! snapshots), warm instances, metrics, what an operator runs it with (JSON logs, request ids,
//! the API key), its stores on Redis, its data's privacy, and `up`
//! (start-up, Ctrl-C, deployments while it serves, where it takes its own files from).

mod adversarial;
mod compile_cache;
mod edges;
mod grants;
mod hot_deploy;
mod installation;
mod installed_watch;
mod limits;
mod metrics;
mod operations;
mod outbound;
mod private_data;
mod private_from_the_start;
mod redis_store;
mod services;
mod snapshots;
mod stack_up;
mod startup;
mod tiers;
mod warm_instances;
