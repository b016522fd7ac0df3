//! Reading a request's body before a component sees it: whole, within the body cap and the
//! request's deadline, so an oversized body is answered 413 by the host, whatever the guest
//! would have done, and a client trickling its body in holds a connection, never one of the
//! slots the other clients need.

use crate::held::{self, Held};
use crate::responses::{self, HostResponse};
use bytes::Bytes;
use edge_api::error::ErrorCode;
use http_body_util::{BodyExt, Full};
use hyper::body::Body;
use hyper::body::Incoming;
use std::time::Instant;

/// How much of an oversized body is read and discarded so the client gets a clean 413.
const MAX_DRAIN: u64 = 64 << 20;

/// `req` with its body read (at most `cap` bytes, by `deadline`); `Err` is the answer to send
/// instead.
///
/// An oversized body is still read and discarded (up to [`MAX_DRAIN`]) before answering:
/// a client that is still uploading would otherwise see the connection reset instead of
/// the 413.
pub async fn read_whole(
    req: hyper::Request<Incoming>,
    cap: usize,
    deadline: Instant,
) -> Result<hyper::Request<Full<Bytes>>, Box<HostResponse>> {
    let (parts, mut body) = req.into_parts();
    if body.is_end_stream() {
        return Ok(hyper::Request::from_parts(parts, Full::new(Bytes::new())));
    }
    let declared = parts
        .headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let mut over = declared.is_some_and(|n| n > cap as u64);
    // Counted against what the whole process may hold (see `held`), the declared length at
    // once (a body that stops one byte short holds it all) and the connection's read buffer.
    let busy = |why: held::Refused| refuse(ErrorCode::Overloaded, why.0, false);
    let mut held = Held::begin().map_err(busy)?;
    let reserved = match declared {
        Some(n) if !over => n as usize,
        _ => 0,
    };
    held.cover(held::READ_BUFFER_HELD + reserved)
        .map_err(busy)?;
    // Grown by hand (`reserve_exact`), so what is counted is the buffer's capacity.
    let mut buf: Vec<u8> = Vec::with_capacity(reserved);
    let mut seen: u64 = 0;
    let read = tokio::time::timeout_at(deadline.into(), async {
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(Stop::Read)?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            seen += data.len() as u64;
            if over || buf.len() + data.len() > cap {
                over = true;
                buf.clear();
                if seen > MAX_DRAIN {
                    return Ok(false);
                }
            } else {
                let needed = buf.len() + data.len();
                if needed > buf.capacity() {
                    // Doubling, as a growing buffer does, but never past the cap; counted
                    // before it is allocated.
                    let grown = needed.max(buf.capacity() * 2).min(cap);
                    held.cover(held::READ_BUFFER_HELD + grown)
                        .map_err(Stop::Busy)?;
                    buf.reserve_exact(grown - buf.len());
                }
                buf.extend_from_slice(&data);
            }
        }
        Ok::<_, Stop>(true)
    })
    .await;
    match read {
        Err(_) => Err(refuse(
            ErrorCode::Timeout,
            "timed out while receiving the request body".into(),
            false,
        )),
        Ok(Err(Stop::Read(e))) => Err(refuse(
            ErrorCode::InvalidJson,
            format!("could not read the request body: {e}"),
            false,
        )),
        Ok(Err(Stop::Busy(why))) => Err(busy(why)),
        Ok(Ok(drained)) if over => Err(refuse(
            ErrorCode::PayloadTooLarge,
            format!("request body exceeds the limit of {cap} bytes"),
            drained,
        )),
        Ok(Ok(_)) => Ok(hyper::Request::from_parts(
            parts,
            Full::new(Bytes::from(buf)),
        )),
    }
}

/// Why reading a body stopped early.
enum Stop {
    Read(hyper::Error),
    Busy(held::Refused),
}

/// An error answer; `drained: false` closes the connection, as unread body bytes remain and
/// it cannot carry another request.
fn refuse(code: ErrorCode, message: String, drained: bool) -> Box<HostResponse> {
    let mut resp = responses::error(code, message);
    if !drained {
        resp.headers_mut().insert(
            hyper::header::CONNECTION,
            hyper::header::HeaderValue::from_static("close"),
        );
    }
    Box::new(resp)
}
