//! Finding who is at the other end of a loopback connection: the socket's holder
//! ([`super::socket`], [`super::tree`]) and the relatives a request needs named.

use crate::services::caller::socket;
use crate::services::caller::tree;
use host_core::http::connection::ConnInfo;
use registry_core::caller::{Caller, Claimed};

/// The process holding the client's end of `conn` and its ancestors (see [`tree::line`];
/// blocking: reads /proc), found once per connection.
fn owner_line(conn: &ConnInfo) -> Option<Vec<u32>> {
    let mut known = conn.peer_process();
    if let Some(line) = known.and_then(tree::line) {
        return Some(line);
    }
    let inode = socket::inode(conn.peer, conn.local)?;
    *known = tree::holder(inode);
    known.and_then(tree::line)
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
    let Some(mut related) = owner_line(conn) else {
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

/// The user who made the loopback connection `conn` (the owner of its client socket), or
/// `None` for another machine's or where the kernel could not be asked (blocking).
pub fn user(conn: &ConnInfo) -> Option<u32> {
    if !conn.peer.ip().to_canonical().is_loopback() {
        return None;
    }
    socket::socket(conn.peer, conn.local).map(|s| s.uid)
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
