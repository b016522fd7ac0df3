//! A stand-in HTTP service for the tests that need one to misbehave on purpose (a registry
//! that assigns a busy port, a model deployment that breaks the specification).

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use serde_json::Value;
use std::future::Future;

/// Serves on a free loopback port, answering each request with the status and JSON body
/// `answer(path, body)` makes of it (`body` is `null` where the request's is not JSON;
/// `answer` runs on the server's task, so it may await). Returns the service's URL.
pub async fn serve<F, Fut>(answer: F) -> String
where
    F: Fn(String, Value) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = (u16, Value)> + Send,
{
    // Port 0: the kernel picks an unused ephemeral port, outside the blocks `port_block`
    // hands out, so no other test (or test process) can take it between check and bind.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let answer = answer.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                    let answer = answer.clone();
                    async move {
                        let path = req.uri().path().to_owned();
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let body = serde_json::from_slice(&body).unwrap_or_default();
                        let (status, reply) = answer(path, body).await;
                        let resp = hyper::Response::builder()
                            .status(status)
                            .body(Full::new(Bytes::from(reply.to_string())))
                            .unwrap();
                        Ok::<_, std::convert::Infallible>(resp)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    url
}
