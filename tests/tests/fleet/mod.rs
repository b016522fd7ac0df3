//! Beyond one machine: several `runtime-host up` hosts on one Redis behind HAProxy, and the
//! fleet's shipped files (deploy/fleet, docs/deploy.md).

mod files;
mod three_hosts;
