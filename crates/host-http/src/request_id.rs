//! Request ids: every request the host answers carries one, in `x-request-id`, on its way to
//! the component and back in the answer (the host's own answers too: a 404, a 413, a 503),
//! and in its log line ([`crate::access_log`]), so a client's report, the component's own
//! logs and the host's log name the same request.
//!
//! A client's id is kept when it is sane: 1 to [`MAX_LEN`] visible ASCII characters (a log
//! pipeline's or a proxy's id passes through); anything else (too long, spaces, control
//! characters, not ASCII) is replaced, so no client can forge log lines or fill them. Ids the
//! host makes are a random prefix, fixed for the process, and a counter: unique within the
//! process and, by the prefix, across the hosts of a fleet; not secret, and not meant to be.

use hyper::header::{HeaderName, HeaderValue};
use std::hash::{BuildHasher, Hasher};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The header the id travels in, both ways.
pub const HEADER: HeaderName = HeaderName::from_static("x-request-id");
/// The longest id kept from a client (UUIDs and most tracing ids are under 64).
pub const MAX_LEN: usize = 128;

/// The id of `req`: the client's when sane, else a new one; set on the request for the
/// component (replacing a client's that was not sane).
pub fn assign<B>(req: &mut hyper::Request<B>) -> HeaderValue {
    let id = match req.headers().get(&HEADER) {
        Some(given) if is_sane(given.as_bytes()) => given.clone(),
        _ => generate(),
    };
    req.headers_mut().insert(HEADER, id.clone());
    id
}

/// Whether a client's id can be kept: 1 to [`MAX_LEN`] visible ASCII characters.
pub fn is_sane(id: &[u8]) -> bool {
    !id.is_empty() && id.len() <= MAX_LEN && id.iter().all(u8::is_ascii_graphic)
}

/// A new id: the process's prefix (16 hex digits) and a counter.
fn generate() -> HeaderValue {
    static PREFIX: OnceLock<u64> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let prefix = *PREFIX.get_or_init(|| {
        // The standard library's per-process random keys, mixed with the pid and the time.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        hasher.write_u128(now.map_or(0, |d| d.as_nanos()));
        hasher.finish()
    });
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    // Written digit by digit: `format!` cost more than the rest of the id's work.
    let mut id = [0u8; 33];
    push_hex(&mut id[..16], prefix);
    id[16] = b'-';
    let digits = (16 - n.leading_zeros() as usize / 4).max(1);
    push_hex(&mut id[17..17 + digits], n);
    HeaderValue::from_bytes(&id[..17 + digits])
        .expect("hex digits and a hyphen are a valid header value")
}

/// `value`'s low `out.len()` hex digits into `out`, most significant first.
fn push_hex(out: &mut [u8], mut value: u64) {
    for byte in out.iter_mut().rev() {
        *byte = b"0123456789abcdef"[(value & 0xf) as usize];
        value >>= 4;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request_with(id: Option<&[u8]>) -> hyper::Request<()> {
        let mut req = hyper::Request::new(());
        if let Some(id) = id {
            let value = HeaderValue::from_bytes(id).unwrap();
            req.headers_mut().insert(HEADER, value);
        }
        req
    }

    #[test]
    fn a_sane_id_is_kept_any_other_replaced() {
        let mut req = request_with(Some(b"client-7f3a/trace:01"));
        assert_eq!(assign(&mut req), "client-7f3a/trace:01");
        let long = vec![b'a'; MAX_LEN + 1];
        for bad in [&b"has space"[..], b"tab\there", b"caf\xc3\xa9", &long] {
            let mut req = request_with(Some(bad));
            let id = assign(&mut req);
            assert_ne!(id.as_bytes(), bad);
            assert!(is_sane(id.as_bytes()));
            assert_eq!(req.headers()[HEADER], id, "the component gets the new one");
        }
        assert!(is_sane(&[b'a'; MAX_LEN]));
    }

    #[test]
    fn ids_are_written_in_hex() {
        let mut out = [0u8; 4];
        push_hex(&mut out, 0x2a);
        assert_eq!(&out, b"002a");
        let mut one = [0u8; 1];
        push_hex(&mut one, 0);
        assert_eq!(&one, b"0");
    }

    #[test]
    fn made_ids_differ() {
        let (mut a, mut b) = (request_with(None), request_with(None));
        let (a, b) = (assign(&mut a), assign(&mut b));
        assert_ne!(a, b);
        assert_eq!(
            a.as_bytes()[..17],
            b.as_bytes()[..17],
            "one prefix per process"
        );
    }
}
