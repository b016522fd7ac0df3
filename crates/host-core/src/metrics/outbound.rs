//! Outgoing HTTP requests the host refused a component (`capabilities::outbound`): a
//! component trying addresses it was not granted is worth an alert, not only a log line.

use super::{Deployment, DeploymentLabels, global};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

pub(super) fn register(r: &mut Registry, denied: &Family<DeploymentLabels, Counter>) {
    r.register(
        "outbound_denied",
        "Outgoing HTTP requests refused because no allowed_outbound_hosts rule admits them, by \
         deployment",
        denied.clone(),
    );
}

impl Deployment {
    /// Counts one outgoing request refused to this deployment's component.
    pub fn outbound_denied(&self) {
        global().outbound_denied.get_or_create(&self.labels()).inc();
    }
}
