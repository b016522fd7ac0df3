//! Who is calling the registry: what only a native host can tell (docs/DECISIONS.md
//! "Registry ownership").
//!
//! On a loopback connection Linux knows the process at the other end: `sock_diag` netlink
//! maps the connection to a socket inode ([`socket`]), and `/proc/<pid>/fd` shows which
//! process holds it ([`tree`]), found once per connection. The registry then lets a process
//! register itself, its ancestors or its descendants (a launcher registering the model it
//! started), and renew without the registration id only what it registered. Callers that
//! cannot be known (another machine, another user's process we may not inspect) are named
//! as such and get the stricter rules.
//!
//! The answer goes to the component in one request header, [`HEADER`] (written and read by
//! `registry_core::caller`), vouched for by a secret the host generates at each start (the
//! component's `registry_maintenance_token`):
//! the host removes the header from every incoming request (`crate::guard`), so a client
//! cannot forge it, and under Spin, where no one vouches, the component ignores it.

mod socket;
mod tree;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

pub use registry_core::caller::{Caller, Claimed, HEADER, Identity};

/// The two ends of a connection, put in each request's extensions by `crate::listener::serve`,
/// and the process found at the client's end, kept for the connection's later requests.
#[derive(Debug, Clone)]
pub struct ConnInfo {
    pub peer: SocketAddr,
    pub local: SocketAddr,
    /// Whose socket the client's end is, once asked. A socket changes hands only when its
    /// holder gives it away (forks, or passes the descriptor), so it is asked again only
    /// once that process has ended.
    owner: Arc<Mutex<Option<u32>>>,
}

impl ConnInfo {
    pub fn new(peer: SocketAddr, local: SocketAddr) -> Self {
        Self {
            peer,
            local,
            owner: Arc::default(),
        }
    }

    /// The process holding the client's end of this connection and its ancestors (see
    /// [`tree::line`]; blocking: reads /proc).
    fn owner_line(&self) -> Option<Vec<u32>> {
        let mut known = self.owner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(line) = known.and_then(tree::line) {
            return Some(line);
        }
        let inode = socket::inode(self.peer, self.local)?;
        *known = tree::holder(inode);
        known.and_then(tree::line)
    }
}

/// Which of the caller's relatives a request needs named: what the registry checks them
/// against. Finding every descendant walks the caller's whole family, so it is done only
/// for the request that needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relatives {
    /// The caller, its ancestors, and `claimed` (the process a registration names) if that
    /// descends from the caller.
    Line { claimed: Option<u32> },
    /// The caller's line and every descendant: a renewal without its registration id, which
    /// may come from a relative of the registered process.
    All,
}

/// Finds who is at the other end of `conn`, naming the relatives `wanted` (blocking: reads
/// /proc).
pub fn identify(conn: &ConnInfo, wanted: Relatives) -> Caller {
    let peer = conn.peer.ip().to_canonical();
    if !peer.is_loopback() {
        return Caller::Remote(peer.to_string());
    }
    let Some(mut related) = conn.owner_line() else {
        return Caller::Unknown;
    };
    let pid = related[0];
    match wanted {
        Relatives::Line { claimed: Some(c) } if c != pid && tree::descends_from(c, pid) => {
            related.push(c)
        }
        Relatives::Line { .. } => {}
        Relatives::All => related.extend(tree::descendants(pid)),
    }
    Caller::Local { related }
}

/// What `pid` is on this machine.
pub fn claimed(pid: u64) -> Claimed {
    let Ok(pid) = u32::try_from(pid) else {
        return Claimed::Dead;
    };
    if pid <= 1 {
        return Claimed::System;
    }
    match tree::stat(pid) {
        None => Claimed::Dead,
        // Kernel threads are children of kthreadd (pid 2).
        Some(s) if pid == 2 || s.ppid == 2 => Claimed::System,
        Some(s) if matches!(s.state, 'Z' | 'X') => Claimed::Dead,
        Some(_) => Claimed::Alive,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real loopback connection made here is traced back to this very process.
    #[test]
    fn finds_the_process_behind_a_loopback_connection() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_server_end, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        let conn = ConnInfo::new(peer, listener.local_addr().unwrap());
        match identify(&conn, Relatives::All) {
            Caller::Local { related } => {
                assert_eq!(related[0], std::process::id());
                assert!(!related.contains(&1), "init is nobody's relative");
            }
            other => panic!("expected this process, got {other:?}"),
        }
        // A child is named when the request claims it, or asks for every relative.
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let kid = child.id();
        let named = |wanted| match identify(&conn, wanted) {
            Caller::Local { related } => related.contains(&kid),
            other => panic!("expected this process, got {other:?}"),
        };
        assert!(named(Relatives::Line { claimed: Some(kid) }));
        assert!(named(Relatives::All));
        assert!(!named(Relatives::Line { claimed: None }));
        // An orphan (its parent, our child, has exited) is no longer of the family.
        let out = std::process::Command::new("sh")
            .args(["-c", "sleep 5 >/dev/null 2>&1 & echo $!"])
            .output()
            .unwrap();
        let orphan: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        let claimed = Relatives::Line {
            claimed: Some(orphan),
        };
        match identify(&conn, claimed) {
            Caller::Local { related } => assert!(!related.contains(&orphan), "{related:?}"),
            other => panic!("expected this process, got {other:?}"),
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let _ = std::process::Command::new("kill")
            .args(["-9", &orphan.to_string()])
            .status();
    }

    #[test]
    fn claims() {
        assert_eq!(claimed(1), Claimed::System);
        assert_eq!(claimed(0), Claimed::System);
        assert_eq!(claimed(u64::MAX), Claimed::Dead);
        assert_eq!(claimed(std::process::id().into()), Claimed::Alive);
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert_eq!(claimed(pid.into()), Claimed::Dead);
    }
}
