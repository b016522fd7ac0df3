//! Requests as bytes on the wire, for what an HTTP client library will not send (no `Host`,
//! HTTP/1.0, a body that trickles in) and for requests that must come from a process other
//! than the test's own (the registry tells processes apart).

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An answer read off the wire.
#[derive(Debug)]
pub struct RawReply {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl RawReply {
    fn parse(text: &str) -> Self {
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((text, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP answer: {text:?}"));
        let chunked = head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked");
        Self {
            status,
            head: head.to_owned(),
            body: if chunked {
                dechunk(body)
            } else {
                body.to_owned()
            },
        }
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.body))
    }
}

/// The payload of a chunked body: each chunk is its hex length, CRLF, the data, CRLF.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// A POST of a JSON `body` to `path`, as raw HTTP/1.1 with `Connection: close`.
pub fn post(port: u16, path: &str, body: &str, extra_headers: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n{extra_headers}\r\n{body}",
        body.len()
    )
}

/// Sends `request` as is on a new connection to `127.0.0.1:port`; the answer once the
/// server closes (send `Connection: close`, or HTTP/1.0).
pub async fn send(port: u16, request: &str) -> RawReply {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut answer))
        .await
        .expect("answered within 30 s")
        .expect("read");
    RawReply::parse(&String::from_utf8_lossy(&answer))
}

/// Sends `request` from a separate `bash` process (through its `/dev/tcp`): a caller that is
/// neither this test process nor anything it started before.
pub fn send_from_another_process(port: u16, request: &str) -> RawReply {
    let out = std::process::Command::new("bash")
        .args([
            "-c",
            r#"exec 3<>"/dev/tcp/127.0.0.1/$PORT" && printf '%s' "$REQUEST" >&3 && timeout 30 cat <&3"#,
        ])
        .env("PORT", port.to_string())
        .env("REQUEST", request)
        .output()
        .expect("running bash");
    RawReply::parse(&String::from_utf8_lossy(&out.stdout))
}

/// `clients` connections to `port`, opened by `threads` threads, each sending a `POST
/// /predict` that declares a body of `size` bytes and all of it but the last byte: bodies
/// the host must hold until the deadline. A write the host cuts short (it refused the
/// client and closed) is not an error here: [`held_and_refused`] tells the two apart.
pub fn hold_bodies(
    port: u16,
    clients: usize,
    threads: usize,
    size: usize,
) -> Vec<std::net::TcpStream> {
    use std::io::Write;
    let holders: Vec<_> = (0..threads)
        .map(|t| {
            std::thread::spawn(move || {
                let body = vec![b'x'; size - 1];
                let head = format!(
                    "POST /predict HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: \
                     application/json\r\nContent-Length: {size}\r\n\r\n"
                );
                let mut streams = Vec::new();
                for _ in (t..clients).step_by(threads) {
                    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
                    s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
                    let _ = s
                        .write_all(head.as_bytes())
                        .and_then(|()| s.write_all(&body));
                    streams.push(s);
                }
                streams
            })
        })
        .collect();
    holders
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect()
}

/// The connections of [`hold_bodies`] the host holds (nothing to read yet) and those it
/// refused (an answer, the end of the stream or a reset).
pub fn held_and_refused(
    streams: Vec<std::net::TcpStream>,
) -> (Vec<std::net::TcpStream>, Vec<std::net::TcpStream>) {
    let (mut held, mut refused) = (Vec::new(), Vec::new());
    for s in streams {
        s.set_nonblocking(true).unwrap();
        match s.peek(&mut [0u8; 16]) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => held.push(s),
            _ => refused.push(s),
        }
    }
    (held, refused)
}
