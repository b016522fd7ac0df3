//! Beyond one machine: several `runtime-host up` hosts on one Redis behind HAProxy, and the
//! fleet's shipped files (deploy/fleet, docs/deploy.md), and Redis made highly available with
//! a replica and Sentinel.

mod files;
mod sentinel;
mod three_hosts;
