//! The [`LiveSet`]'s admin API deployments written to the data directory after each change
//! ([`super::super::kept`]), so `up` deploys them again when it starts.

use super::LiveSet;
use super::entry::Origin;
use crate::services::deployments::kept::{self, KeptDeployment};

impl LiveSet {
    /// Writes the admin API's deployments as they are now. One write at a time, each with
    /// the list as it is when that write begins, so the last write is the latest list. A
    /// failure is logged: the deployment itself stands, but would not come back after a
    /// restart.
    pub async fn keep_api_deployments(&self) {
        let _one_at_a_time = self.keeping.lock().await;
        let listed: Vec<KeptDeployment> = {
            let entries = self.entries.lock().await;
            let api = entries.iter().filter(|(_, e)| e.origin == Origin::Api);
            api.map(|(name, e)| KeptDeployment {
                name: name.clone(),
                path: e.source.clone(),
                version: e.version.clone(),
            })
            .collect()
        };
        let data_dir = self.deployer.launcher.runtime().data_dir.clone();
        let saving = move || kept::save(&data_dir, listed);
        match tokio::task::spawn_blocking(saving).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::error!(error = %format!("{e:#}"), "could not keep the admin API's deployments; they will not come back after a restart")
            }
            Err(e) => tracing::error!(error = %e, "keeping the admin API's deployments"),
        }
    }
}
