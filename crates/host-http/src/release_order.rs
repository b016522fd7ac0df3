//! An answer ends only once the instance that wrote it has been released.
//!
//! The guest finishes its body a moment before its handler returns and the instance goes
//! back to the pool. Were the answer to end first, a client could read all of it and send
//! its next request on the same connection before that: the next request would then find no
//! idle instance and make a new one (or, at `--max-concurrency 1`, be refused as
//! `overloaded`). HTTP/1.1 reads a connection's next request only once the answer's body has
//! ended, so the body is what waits: a body of a declared length ends with its last byte,
//! whose frame is held until the release; an answer sent without reading its body at all
//! (to HEAD, of length 0, 1xx, 204, 304) has its head wait instead.

use bytes::Bytes;
use http_body_util::BodyExt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::sync::oneshot;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;

/// `resp` (the answer to a HEAD request where `bodiless`), made to end only after
/// `released` resolves (sent or dropped once the instance is back in the pool or gone), or
/// at `deadline`.
pub async fn ends_after_release(
    resp: hyper::Response<HyperOutgoingBody>,
    bodiless: bool,
    deadline: Instant,
    released: oneshot::Receiver<()>,
) -> hyper::Response<HyperOutgoingBody> {
    let length = resp
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse().ok());
    let status = resp.status().as_u16();
    if bodiless || length == Some(0) || matches!(status, 100..=199 | 204 | 304) {
        // The body is dropped first: a guest still writing one is not left blocked on a
        // pipe nobody reads.
        let (head, body) = resp.into_parts();
        drop(body);
        let _ = tokio::time::timeout_at(deadline.into(), released).await;
        let empty = http_body_util::Empty::new().map_err(|never| match never {});
        return hyper::Response::from_parts(head, empty.boxed_unsync());
    }
    resp.map(|body| EndsAfterRelease::wrap(body, length, released))
}

/// A response body that ends only once the instance that wrote it has been released; a body
/// of a declared length ends with its last byte, so that byte's frame is held until then.
struct EndsAfterRelease {
    inner: HyperOutgoingBody,
    released: Option<oneshot::Receiver<()>>,
    /// Bytes still to come, where the response declared its length.
    remaining: Option<u64>,
    /// The frame that completes a declared length, waiting for the release.
    held: Option<hyper::body::Frame<Bytes>>,
}

impl EndsAfterRelease {
    fn wrap(
        inner: HyperOutgoingBody,
        length: Option<u64>,
        released: oneshot::Receiver<()>,
    ) -> HyperOutgoingBody {
        Self {
            inner,
            released: Some(released),
            remaining: length,
            held: None,
        }
        .boxed_unsync()
    }
}

impl hyper::body::Body for EndsAfterRelease {
    type Data = Bytes;
    type Error = wasmtime_wasi_http::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.held.is_none() {
            match std::task::ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                None => {}
                Some(Ok(frame)) => {
                    let completes = match (this.remaining.as_mut(), frame.data_ref()) {
                        (Some(left), Some(data)) => {
                            *left = left.saturating_sub(data.len() as u64);
                            *left == 0
                        }
                        _ => false,
                    };
                    if !completes || this.released.is_none() {
                        return Poll::Ready(Some(Ok(frame)));
                    }
                    this.held = Some(frame);
                }
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
            }
        }
        if let Some(released) = &mut this.released {
            // Sent or dropped: either way the instance is settled.
            std::task::ready!(Pin::new(released).poll(cx)).ok();
            this.released = None;
        }
        Poll::Ready(this.held.take().map(Ok))
    }

    fn is_end_stream(&self) -> bool {
        self.released.is_none() && self.held.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}
