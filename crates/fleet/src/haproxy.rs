//! HAProxy (Debian's `haproxy`) run from `deploy/fleet/haproxy.cfg`, listening on loopback,
//! and its admin socket: a server's state (drain, ready, maint), its status and sessions.

use process_harness::{Output, Process};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// The servers `haproxy.cfg` names: `host-1` .. `host-3`.
pub const SERVERS: usize = 3;

pub struct Haproxy {
    process: Process,
    socket: PathBuf,
    pub port: u16,
    _dir: tempfile::TempDir,
}

/// Whether `haproxy` can be run here.
pub fn installed() -> bool {
    local_redis::program_answers("haproxy", "-v")
}

impl Haproxy {
    /// Starts HAProxy in front of `hosts` (`host-1` .. of the file, in order; at most
    /// [`SERVERS`]). Its port is a free one; should another process take it first (a
    /// race with the tests beside this one), HAProxy exits and is started again on another.
    pub fn start(hosts: &[String]) -> Self {
        let mut tries = 0;
        loop {
            match Self::try_start(hosts) {
                Ok(haproxy) => return haproxy,
                Err(why) if tries < 3 => {
                    eprintln!("haproxy: {why}; again on another port");
                    tries += 1;
                }
                Err(why) => panic!("haproxy: {why} (it said why above)"),
            }
        }
    }

    fn try_start(hosts: &[String]) -> Result<Self, String> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let socket = dir.path().join("admin.sock");
        let port = process_harness::free_port().expect("a free port");
        let mut cmd = Command::new("haproxy");
        cmd.arg("-db")
            .arg("-f")
            .arg(super::unit::deploy_dir().join("haproxy.cfg"))
            .env("FLEET_LISTEN", format!("127.0.0.1:{port}"))
            .env("HAPROXY_STATS_SOCKET", &socket);
        // The file names three hosts; those a smaller fleet lacks get an address nothing
        // listens on, and are put in maintenance below.
        for i in 0..SERVERS {
            let host = hosts.get(i).map_or("127.0.0.1:1", String::as_str);
            cmd.env(format!("FLEET_HOST_{}", i + 1), host);
        }
        let process = Process::start("haproxy", cmd, Output::Null, Output::Inherit)
            .expect("starting haproxy");
        let haproxy = Self {
            process,
            socket,
            port,
            _dir: dir,
        };
        let started = Instant::now();
        while !haproxy
            .try_command("show info")
            .is_ok_and(|i| i.contains("Name: HAProxy"))
        {
            if let Some(status) = haproxy.process.exit_status() {
                return Err(format!("exited ({status})"));
            }
            if started.elapsed() > Duration::from_secs(10) {
                return Err("no admin socket within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        for i in hosts.len()..SERVERS {
            haproxy.set_state(&super::server(i), "maint");
        }
        Ok(haproxy)
    }

    /// `http://127.0.0.1:<port><path>`: where clients go.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn try_command(&self, command: &str) -> std::io::Result<String> {
        let mut stream = std::os::unix::net::UnixStream::connect(&self.socket)?;
        stream.write_all(format!("{command}\n").as_bytes())?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer)?;
        Ok(answer)
    }

    /// Runs an admin command; its answer.
    pub fn command(&self, command: &str) -> String {
        self.try_command(command)
            .unwrap_or_else(|e| panic!("haproxy admin socket, `{command}`: {e}"))
    }

    /// `set server hosts/<server> state <state>` (ready, drain or maint).
    pub fn set_state(&self, server: &str, state: &str) {
        let answer = self.command(&format!("set server hosts/{server} state {state}"));
        assert!(answer.trim().is_empty(), "set {server} {state}: {answer}");
    }

    /// A column of `show stat` for the server (`status`, `scur`, ...).
    pub fn stat(&self, server: &str, column: &str) -> String {
        let csv = self.command("show stat");
        let mut lines = csv.lines();
        let header: Vec<&str> = lines
            .next()
            .unwrap_or_default()
            .trim_start_matches("# ")
            .split(',')
            .collect();
        let at = header
            .iter()
            .position(|h| *h == column)
            .unwrap_or_else(|| panic!("no column {column} in show stat: {csv}"));
        lines
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|f| f.first() == Some(&"hosts") && f.get(1) == Some(&server))
            .and_then(|f| f.get(at).map(|v| v.to_string()))
            .unwrap_or_else(|| panic!("no server hosts/{server} in show stat: {csv}"))
    }

    /// Waits until the server is UP by a health check that passed (not just UP because it
    /// has not been checked yet); how long that took.
    pub fn wait_healthy(&self, server: &str, within: Duration) -> Duration {
        let started = Instant::now();
        loop {
            let (status, check) = (
                self.stat(server, "status"),
                self.stat(server, "check_status"),
            );
            if status.starts_with("UP") && check == "L7OK" {
                return started.elapsed();
            }
            assert!(
                started.elapsed() < within,
                "hosts/{server} not checked healthy within {within:?}: {status}, {check}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the server's status starts with `status` (UP, DOWN, DRAIN, MAINT); how
    /// long that took.
    pub fn wait_status(&self, server: &str, status: &str, within: Duration) -> Duration {
        let started = Instant::now();
        loop {
            if self.stat(server, "status").starts_with(status) {
                return started.elapsed();
            }
            assert!(
                started.elapsed() < within,
                "hosts/{server} not {status} within {within:?}: {}",
                self.stat(server, "status")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    /// A backend that answers every request 200 `backend saw <path>`.
    fn backend() -> String {
        named_backend("")
    }

    /// A backend that answers every request 200 `backend <name>saw <path>`.
    fn named_backend(name: &'static str) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
        let addr = listener.local_addr().expect("an address").to_string();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || answer_all(stream, name));
            }
        });
        addr
    }

    fn answer_all(mut stream: TcpStream, name: &str) {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        while let Ok(n) = stream.read(&mut chunk) {
            if n == 0 {
                return;
            }
            buf.extend_from_slice(&chunk[..n]);
            while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                buf.drain(..end + 4);
                let path = head.split(' ').nth(1).unwrap_or("").to_owned();
                let body = format!("backend {name}saw {path}");
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                if stream.write_all(resp.as_bytes()).is_err() {
                    return;
                }
            }
        }
    }

    /// `GET path` through HAProxy: status and body.
    fn get(haproxy: &Haproxy, path: &str) -> (u16, String) {
        let (status, _, body) = get_with(haproxy, path, "");
        (status, body)
    }

    /// `GET path` through HAProxy with `headers` (`Name: value\r\n` each): status, the
    /// response's head and body.
    fn get_with(haproxy: &Haproxy, path: &str, headers: &str) -> (u16, String, String) {
        let mut s = TcpStream::connect(("127.0.0.1", haproxy.port)).expect("haproxy");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let req = format!(
            "GET {path} HTTP/1.1\r\nHost: fleet.example\r\n{headers}Connection: close\r\n\r\n"
        );
        s.write_all(req.as_bytes()).unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        let status = answer
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no status in {answer:?}"));
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        (status, head.to_owned(), body.to_owned())
    }

    /// Whether HAProxy can run as `deploy/fleet/haproxy.cfg` asks (installed, and root for its
    /// `user` and `chroot`); says SKIPPED when not.
    fn runnable_here() -> bool {
        let root = Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
        let runnable = installed() && root;
        if !runnable {
            eprintln!("SKIPPED: needs haproxy installed and root");
        }
        runnable
    }

    /// Issue 62: behind `leastconn` a browser would see another host's registrations table on
    /// each refresh; the cookie HAProxy adds keeps it on the host that first answered it,
    /// while a client without the cookie is still balanced.
    #[test]
    fn a_browser_stays_on_the_host_that_first_answered_it() {
        if !runnable_here() {
            return;
        }
        let names = ["one ", "two ", "three "];
        let haproxy = Haproxy::start(&names.map(named_backend));
        for i in 0..SERVERS {
            haproxy.wait_healthy(&crate::server(i), Duration::from_secs(10));
        }
        let (status, head, first) = get_with(&haproxy, "/", "");
        assert_eq!(status, 200, "{head}");
        let cookie = head
            .lines()
            .find_map(|l| {
                l.strip_prefix("set-cookie: ")
                    .or(l.strip_prefix("Set-Cookie: "))
            })
            .unwrap_or_else(|| panic!("no cookie set: {head}"));
        let pair = cookie.split(';').next().unwrap();
        assert!(pair.starts_with("runtime-host-server=host-"), "{cookie}");
        for _ in 0..10 {
            let (_, _, again) = get_with(&haproxy, "/", &format!("Cookie: {pair}\r\n"));
            assert_eq!(again, first, "the same host with the cookie {pair}");
        }
        let seen: std::collections::HashSet<String> =
            (0..12).map(|_| get(&haproxy, "/").1).collect();
        assert!(seen.len() > 1, "without the cookie, balanced: {seen:?}");
    }

    /// Issue 56, item 11: the public frontend of `deploy/fleet/haproxy.cfg` forwards the
    /// app's public routes only; the admin API, the host's metrics and the registry's writes
    /// are refused there (403, a JSON error) and never reach a host. Needs haproxy and root
    /// (the file's `user` and `chroot`), as the fleet test does.
    #[test]
    fn the_public_frontend_forwards_public_routes_only() {
        if !runnable_here() {
            return;
        }
        let haproxy = Haproxy::start(&[backend()]);
        haproxy.wait_healthy(&crate::server(0), Duration::from_secs(10));
        for private in [
            "/admin/deployments",
            "/admin",
            "/metrics",
            "/register",
            "/heartbeat/5100?registration_id=x",
            "/unregister/5100?registration_id=x",
            "/heartbeat?registration_id=x",
            "/unregister",
            "/registry/maintenance/processes",
        ] {
            let (status, body) = get(&haproxy, private);
            assert_eq!(status, 403, "{private}: {body}");
            assert!(body.contains("\"error_code\":\"forbidden\""), "{body}");
        }
        for public in [
            "/",
            "/api/chats",
            "/registry",
            "/registry/5100",
            "/models/molprop/predict",
            "/models/molprop/metrics",
            "/health",
        ] {
            let (status, body) = get(&haproxy, public);
            assert_eq!(status, 200, "{public}: {body}");
            assert_eq!(body, format!("backend saw {public}"));
        }
    }
}
