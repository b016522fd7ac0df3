//! Outgoing HTTP requests the host refused a component (`capabilities::outbound`): a
//! component trying addresses it was not granted is worth an alert, not only a log line.

use super::{Deployment, global};

impl Deployment {
    /// Counts one outgoing request refused to this deployment's component.
    pub fn outbound_denied(&self) {
        global().outbound_denied.get_or_create(&self.labels()).inc();
    }
}
