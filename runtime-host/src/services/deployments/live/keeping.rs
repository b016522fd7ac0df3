//! The [`LiveSet`]'s admin API deployments written to the data directory after each change
//! ([`super::super::kept`]), so `up` deploys them again when it starts.
//!
//! The list on disk may hold more than this run deploys: an entry whose name the
//! installation or the watched directory took at start, every entry under `--copies` above
//! 1, one changed by hand into a name the admin API refuses. Those stay in the file, written
//! back as they were, until the admin API deploys or undeploys that name in this run (the
//! names it [`owns`](LiveSet::owned)).

use super::LiveSet;
use super::entry::Origin;
use crate::services::deployments::kept::{self, KeptDeployment};
use std::collections::HashSet;

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
        let owned = {
            let mut owned = self.owned.lock().await;
            owned.extend(listed.iter().map(|d| d.name.clone()));
            owned.clone()
        };
        let data_dir = self.deployer.launcher.runtime().data_dir.clone();
        let saving = move || {
            let on_disk = kept::load(&data_dir)?;
            kept::save(&data_dir, merged(on_disk, listed, &owned))
        };
        match tokio::task::spawn_blocking(saving).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::error!(error = %format!("{e:#}"), "could not keep the admin API's deployments; they will not come back after a restart")
            }
            Err(e) => tracing::error!(error = %e, "keeping the admin API's deployments"),
        }
    }

    /// Undeploys `name` that this run does not deploy but the list on disk holds (admin
    /// API): it leaves the list; `false` when the list has no such name.
    pub(super) async fn forget_kept(&self, name: &str) -> bool {
        let data_dir = self.deployer.launcher.runtime().data_dir.clone();
        let listed = tokio::task::spawn_blocking(move || kept::load(&data_dir)).await;
        let held = matches!(listed, Ok(Ok(list)) if list.iter().any(|d| d.name == name));
        if held {
            self.owned.lock().await.insert(name.to_owned());
            self.keep_api_deployments().await;
            tracing::info!(model = %name, "an admin API deployment this run did not deploy is forgotten");
        }
        held
    }
}

/// The list to write: the admin API's deployments now (`api`), and those of `on_disk` whose
/// name this run has not deployed or undeployed through the admin API (not in `owned`).
fn merged(
    on_disk: Vec<KeptDeployment>,
    mut api: Vec<KeptDeployment>,
    owned: &HashSet<String>,
) -> Vec<KeptDeployment> {
    let held = on_disk.into_iter().filter(|d| !owned.contains(&d.name));
    api.extend(held);
    api
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(name: &str) -> KeptDeployment {
        KeptDeployment {
            name: name.into(),
            path: format!("/srv/{name}").into(),
            version: "v1".into(),
        }
    }

    #[test]
    fn entries_this_run_did_not_deploy_stay_until_the_api_names_them() {
        // `shadowed` lost its name to the models directory at start; `removed` was
        // undeployed in this run; `fresh` deployed in this run.
        let on_disk = vec![kept("shadowed"), kept("removed"), kept("../odd")];
        let owned: HashSet<String> = ["removed", "fresh"].map(String::from).into();
        let names: Vec<String> = merged(on_disk, vec![kept("fresh")], &owned)
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(names, ["fresh", "shadowed", "../odd"]);
    }
}
