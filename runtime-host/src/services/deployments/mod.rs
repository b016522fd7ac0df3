//! Deployments as a service: the models a stack (`runtime-host up`) runs, deployed at start
//! and managed while it runs, each by the v1.2 lifecycle (`services::model::lifecycle`) on
//! its own registered port.
//!
//! - [`deployer`]: one deployment compiled, loaded and started ([`deployer::Deployer`]);
//! - [`at_start`]: every model of the stack compiled, then started;
//! - [`live`]: the deployments while the stack runs, each added, upgraded or removed
//!   without touching the others, with its state ([`live::LiveSet`]);
//! - [`kept`]: the admin API's deployments kept in the data directory, deployed again when
//!   the stack starts;
//! - [`tasks`]: where the deployments' tasks go and what stops them;
//! - [`watcher`]: a models directory read again every interval, its changes handed to the
//!   live set;
//! - the routes the host answers on the app port about them: [`admin`] (list, deploy,
//!   undeploy, reload), [`health`] (`/health` for load balancers) and [`oip`] (the Open
//!   Inference Protocol's server routes).

pub mod admin;
pub mod at_start;
pub mod deployer;
pub mod health;
pub mod kept;
pub mod live;
pub mod oip;
pub mod tasks;
pub mod watcher;
