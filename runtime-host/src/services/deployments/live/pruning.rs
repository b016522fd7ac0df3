//! What the [`LiveSet`] removes from the data directory: the snapshots of versions no longer
//! served, once their requests could have finished, and at once the copy of a version that
//! failed to deploy.

use super::LiveSet;
use crate::services::launch::DRAIN_GRACE;
use crate::services::model::versions;
use host_core::support::heap;
use std::sync::Arc;

impl LiveSet {
    /// Once the requests of a version just replaced could have finished, removes `name`'s
    /// snapshots but the version serving and the one before it: refused and older versions
    /// (all of them, if the model was removed meanwhile), and returns the heap they freed to
    /// the system. Skipped while a new version is being deployed, whose copy must not go: its
    /// own end prunes again.
    pub(super) fn prune_later(self: &Arc<Self>, name: &str) {
        let (live, name) = (self.clone(), name.to_owned());
        let drain = self.deployer.launcher.limits().deadline + DRAIN_GRACE;
        tokio::spawn(async move {
            tokio::time::sleep(drain + std::time::Duration::from_secs(1)).await;
            let keep = match live.entries.lock().await.get(&name) {
                Some(e) if e.state.is_busy() => return,
                Some(e) => [Some(e.version.clone()), e.previous_version.clone()],
                None => [None, None],
            };
            let keep: Vec<String> = keep.into_iter().flatten().collect();
            let data_dir = live.deployer.launcher.runtime().data_dir.clone();
            let pruning = move || {
                let keep: Vec<&str> = keep.iter().map(String::as_str).collect();
                versions::prune(&data_dir, Some(&name), &keep, false);
                // What the version gone freed since (its drain, its unregistration) goes
                // back to the system too: glibc keeps up to tens of MiB freed at the top of
                // its heaps after large buffers (a snapshot's bytes) came and went.
                heap::release_freed();
            };
            let _ = tokio::task::spawn_blocking(pruning).await;
        });
    }

    /// Removes the copy of `version` of `name`, which failed to deploy, unless it is the
    /// version serving or the one before it (the same files deployed again).
    pub(super) async fn discard(&self, name: &str, version: &str) {
        let in_use = self.entries.lock().await.get(name).is_some_and(|e| {
            e.version == version || e.previous_version.as_deref() == Some(version)
        });
        if in_use {
            return;
        }
        let (data_dir, name, version) = (
            self.deployer.launcher.runtime().data_dir.clone(),
            name.to_owned(),
            version.to_owned(),
        );
        let removing = move || versions::remove_version(&data_dir, &name, &version);
        let _ = tokio::task::spawn_blocking(removing).await;
    }
}
