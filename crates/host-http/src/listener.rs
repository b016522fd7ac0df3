//! Accepting connections for one listener: HTTP/1.1 with keep-alive, a deadline on request
//! headers, the guard every request passes, each request's id (in and out) and log line,
//! and a graceful drain when the listener stops.
//! Every port the host serves (a component's, the app's, the metrics') is bound and served
//! here ([`PortBinding`]).

use crate::access_log::Arrival;
use crate::connection::ConnInfo;
use crate::guard;
use crate::held;
use crate::request_id;
use crate::responses::HostResponse;
use anyhow::{Context, Result};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// Time a client gets to send its request headers (slow-loris protection).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// What answers the requests of a listener: one component, or an app routing by path.
pub trait Handler: Send + Sync + 'static {
    fn handle(
        self: Arc<Self>,
        req: hyper::Request<Incoming>,
        peer: SocketAddr,
    ) -> impl Future<Output = HostResponse> + Send;
}

/// A bound port, not yet serving.
pub struct PortBinding {
    listener: TcpListener,
    addr: SocketAddr,
}

impl PortBinding {
    /// Binds `addr`. `choose` tells a user how to pick another address when it is taken
    /// (e.g. `--app-port`); the error says so.
    pub async fn bind(addr: SocketAddr, choose: &str) -> Result<Self> {
        let listener = TcpListener::bind(addr).await.with_context(|| {
            format!(
                "cannot listen on {addr}: is another process using it? Choose another with {choose}"
            )
        })?;
        let addr = listener.local_addr()?;
        Ok(Self { listener, addr })
    }

    /// The address bound (with the port the system chose for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL a local client reaches it at.
    pub fn url(&self) -> String {
        local_url(self.addr)
    }

    /// Serves `handler` until `stop` resolves, then stops accepting and waits (up to
    /// `drain`) for requests in flight to finish.
    pub async fn serve<H: Handler>(
        self,
        handler: Arc<H>,
        stop: impl Future<Output = ()>,
        drain: Duration,
    ) -> Result<()> {
        accept(self.listener, handler, stop, drain).await
    }
}

/// The URL a local client reaches a listener on `addr` at (loopback for an unspecified
/// address).
pub fn local_url(addr: SocketAddr) -> String {
    let ip = if addr.ip().is_unspecified() {
        std::net::IpAddr::from([127, 0, 0, 1])
    } else {
        addr.ip()
    };
    format!("http://{}", SocketAddr::new(ip, addr.port()))
}

async fn accept<H: Handler>(
    listener: TcpListener,
    server: Arc<H>,
    shutdown: impl Future<Output = ()>,
    drain: Duration,
) -> Result<()> {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        // Out of file descriptors and the like: back off instead of spinning.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let Ok(local) = stream.local_addr() else { continue };
                let server = server.clone();
                let conn_info = ConnInfo::new(peer, local);
                let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
                    let (server, conn_info) = (server.clone(), conn_info.clone());
                    async move {
                        // Before the guard, so its refusals carry an id too.
                        let id = request_id::assign(&mut req);
                        let arrival = Arrival::new(&req, id.clone(), local.port(), peer);
                        let mut resp = match guard::admit(&mut req, local) {
                            Ok(()) => {
                                req.extensions_mut().insert(conn_info.clone());
                                server.handle(req, peer).await
                            }
                            Err(refused) => *refused,
                        };
                        resp.headers_mut().insert(request_id::HEADER, id);
                        Ok::<_, std::convert::Infallible>(arrival.finish(resp))
                    }
                });
                let conn = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(HEADER_READ_TIMEOUT)
                    // Bounded, and counted while a body arrives (`held`).
                    .max_buf_size(held::READ_BUFFER)
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(stream), service);
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        tracing::debug!(error = %e, %peer, "connection ended with an error");
                    }
                });
            }
            _ = &mut shutdown => break,
        }
    }
    drop(listener);
    tracing::info!("no longer accepting connections; finishing requests in flight");
    if tokio::time::timeout(drain, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still running after {drain:?}; stopping anyway");
    }
    Ok(())
}
