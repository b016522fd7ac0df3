//! `runtime-host serve`: one component on one address until SIGINT/SIGTERM.

use crate::cli::{RuntimeArgs, ServeArgs};
use crate::keyvalue::{KeyValue, sqlite::KvDatabase};
use crate::limits::Limits;
use crate::server::{ComponentServer, serve};
use crate::variables::Variables;
use anyhow::{Context, Result};
use edge_api::model::{ATTRIBUTION, REGISTRATION_NOTICE};
use std::sync::Arc;
use std::time::Duration;

/// Extra time in-flight requests get to finish after a shutdown signal, beyond the deadline.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

impl RuntimeArgs {
    pub fn limits(&self) -> Limits {
        Limits {
            deadline: self.deadline,
            max_memory_bytes: (self.max_memory_mib as usize) << 20,
            max_body_bytes: self.max_body,
            max_concurrency: self.max_concurrency as usize,
        }
    }

    pub fn variables(&self) -> Result<Variables> {
        Variables::from_sources(std::env::vars(), &self.variables)
    }
}

pub async fn run(args: ServeArgs) -> Result<()> {
    println!("{ATTRIBUTION}");
    println!("{REGISTRATION_NOTICE}");
    let limits = args.runtime.limits();
    let vars = args.runtime.variables()?;
    let data_dir = &args.runtime.data_dir;
    let db = Arc::new(KvDatabase::open_in(data_dir)?);
    let engine = crate::engine::build_engine(&limits, Some(&data_dir.join("cache")))?;
    let started = std::time::Instant::now();
    let pre = crate::engine::load_proxy(&engine, &args.component)?;
    tracing::info!(
        component = %args.component.display(),
        load_ms = started.elapsed().as_millis() as u64,
        variables = ?vars.names(),
        "component ready"
    );
    let server = Arc::new(ComponentServer::new(
        pre,
        KeyValue::new(db),
        vars,
        limits.clone(),
    ));
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| {
            format!(
                "cannot listen on {}: is another process using it?",
                args.listen
            )
        })?;
    let addr = listener.local_addr()?;
    // Tests and scripts read this line to learn the port when --listen used port 0.
    println!("listening on http://{addr}");
    serve(
        listener,
        server,
        shutdown_signal(),
        limits.deadline + DRAIN_GRACE,
    )
    .await?;
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("installing the SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
    tracing::info!("shutdown requested");
}
