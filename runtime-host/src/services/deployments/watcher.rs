//! Watching `up --models DIR`: every `--watch-interval` the directory is read again and each
//! model's files fingerprinted ([`Fingerprint`]). A change is acted on once it has held for
//! two scans in a row, so a file still being copied is not deployed half-written: a new
//! model is added, a changed one upgraded, a vanished one removed ([`LiveSet`]).
//!
//! Polling rather than file-system events: it sees the same on every file system (network
//! and container mounts included) and costs a directory listing and a few `stat`s a scan.

use crate::services::deployments::live::LiveSet;
use crate::services::model::spec::{ModelSpec, models_in};
use crate::services::model::versions::Fingerprint;
use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Scans `dir` every `every` until `stop`, handing what changed to `live`.
pub async fn watch(
    dir: PathBuf,
    live: Arc<LiveSet>,
    every: Duration,
    stop: impl Future<Output = ()>,
) {
    tokio::pin!(stop);
    let mut last: BTreeMap<String, Fingerprint> = BTreeMap::new();
    let mut first = true;
    let mut told = HashSet::new();
    loop {
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(every) => {}
        }
        let (specs, refused) = match scan(&dir).await {
            Ok(scanned) => scanned,
            Err(e) => {
                tracing::warn!(dir = ?dir, error = %format!("{e:#}"), "cannot read the models directory; will look again");
                continue;
            }
        };
        // Each refused name said once, not every scan.
        for why in refused {
            if told.insert(why.clone()) {
                tracing::warn!(dir = ?dir, "model left out: {why}");
            }
        }
        let mut now = BTreeMap::new();
        let mut stable = Vec::new();
        for (spec, fingerprint) in specs {
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

/// The models in `dir` with their fingerprints, and the refused names: on a blocking thread,
/// as every file is `stat`ed (a slow or hostile file system never holds up the workers that
/// serve requests).
async fn scan(dir: &Path) -> anyhow::Result<(Vec<(ModelSpec, Fingerprint)>, Vec<String>)> {
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || {
        let found = models_in(&dir)?;
        let specs = found
            .specs
            .into_iter()
            .map(|spec| {
                let fingerprint = Fingerprint::of(&spec.source);
                (spec, fingerprint)
            })
            .collect();
        Ok((specs, found.refused))
    })
    .await?
}
