//! Files served over HTTP for the URL-column tests: a plain HTTP/1.1 server on a loopback
//! port, each path answered with its file (or a 404), optionally after a delay, counting
//! every request per path so a test can tell that no URL was fetched twice.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Served {
    pub port: u16,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

impl Served {
    /// Serves `files` (path → content type and bytes), each answer `delay` late.
    pub fn start(files: HashMap<String, (&'static str, Vec<u8>)>, delay: Duration) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let (files, counted) = (Arc::new(files), hits.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (files, counted) = (files.clone(), counted.clone());
                std::thread::spawn(move || answer(stream, &files, &counted, delay));
            }
        });
        Self { port, hits }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The `--allow-outbound` entry admitting this server.
    pub fn origin(&self) -> String {
        self.url("")
    }

    /// Requests per path so far.
    pub fn hits(&self) -> HashMap<String, usize> {
        self.hits.lock().unwrap().clone()
    }
}

/// Answers the requests of one connection (kept alive while the client keeps it).
fn answer(
    stream: TcpStream,
    files: &HashMap<String, (&'static str, Vec<u8>)>,
    hits: &Mutex<HashMap<String, usize>>,
    delay: Duration,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    loop {
        let mut request = String::new();
        if reader.read_line(&mut request).unwrap_or(0) == 0 {
            return;
        }
        // The headers, up to the blank line (a GET has no body).
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" || line == "\n" {
                break;
            }
        }
        let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
        *hits.lock().unwrap().entry(path.clone()).or_default() += 1;
        std::thread::sleep(delay);
        let (status, kind, body) = match files.get(&path) {
            Some((kind, bytes)) => ("200 OK", *kind, bytes.as_slice()),
            None => ("404 Not Found", "text/plain", b"not here".as_slice()),
        };
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        if stream.write_all(head.as_bytes()).is_err() || stream.write_all(body).is_err() {
            return;
        }
    }
}
