//! Watching `up --models DIR`: every `--watch-interval` the directory is read again and each
//! model's files fingerprinted ([`Fingerprint`]). A change is acted on once it has held for
//! two scans in a row, so a file still being copied is not deployed half-written: a new
//! model is added, a changed one upgraded, a vanished one removed ([`Live`]).
//!
//! Polling rather than file-system events: it sees the same on every file system (network
//! and container mounts included) and costs a directory listing and a few `stat`s a scan.

use crate::commands::up::live::Live;
use crate::services::model::spec::models_in;
use crate::services::model::versions::Fingerprint;
use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub async fn watch(dir: PathBuf, live: Arc<Live>, every: Duration, stop: impl Future<Output = ()>) {
    tokio::pin!(stop);
    let mut last: BTreeMap<String, Fingerprint> = BTreeMap::new();
    let mut first = true;
    loop {
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(every) => {}
        }
        let specs = match models_in(&dir) {
            Ok(specs) => specs,
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %format!("{e:#}"), "cannot read the models directory; will look again");
                continue;
            }
        };
        let mut now = BTreeMap::new();
        let mut stable = Vec::new();
        for spec in specs {
            let fingerprint = Fingerprint::of(&spec.source);
            now.insert(spec.name.clone(), fingerprint.clone());
            if last.get(&spec.name) == Some(&fingerprint) {
                stable.push((spec, fingerprint));
            }
        }
        // Gone for two scans in a row: removed.
        if !first {
            for name in live.watched_names().await {
                if !now.contains_key(&name) && !last.contains_key(&name) {
                    live.remove(&name).await;
                }
            }
        }
        for (spec, fingerprint) in stable {
            let live = live.clone();
            // Each model on its own: a slow compilation holds up no other model.
            tokio::spawn(async move { live.ensure(spec, fingerprint).await });
        }
        last = now;
        first = false;
    }
}
