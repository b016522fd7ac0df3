//! What a service command says and opens before anything else: the specification's
//! attribution with the registration notice (the specification requires it on the start of
//! every model deployment), and the host's metrics on their own listener when asked.

use crate::services::metrics_endpoint;
use edge_api::model::{ATTRIBUTION, REGISTRATION_NOTICE};
use host_core::support::signals;
use std::net::SocketAddr;

/// Prints the attribution and the registration notice.
pub fn print_attribution() {
    println!("{ATTRIBUTION}");
    println!("{REGISTRATION_NOTICE}");
}

/// [`print_attribution`], then the metrics on `metrics_listen` (`--metrics-listen`) if given,
/// until the process is told to stop.
pub async fn announce(metrics_listen: Option<SocketAddr>) -> anyhow::Result<()> {
    print_attribution();
    metrics_endpoint::listen(metrics_listen, signals::wait()).await
}
