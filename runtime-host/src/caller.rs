//! Who is calling the registry: what only a native host can tell (docs/DECISIONS.md
//! "Registry ownership").
//!
//! On a loopback connection Linux knows the process at the other end: `/proc/net/tcp{,6}`
//! maps the connection to a socket inode, and `/proc/<pid>/fd` shows which process holds
//! it. The registry then lets a process register itself, its ancestors or its descendants
//! (a launcher registering the model it started), and renew without the registration id
//! only what it registered. Callers that cannot be known (another machine, another user's
//! process we may not inspect) are named as such and get the stricter rules.
//!
//! The answer goes to the component in one request header, [`HEADER`] (written and read by
//! `registry_core::caller`), vouched for by a secret the host generates at each start (the
//! component's `registry_maintenance_token`):
//! the host removes the header from every incoming request (`crate::guard`), so a client
//! cannot forge it, and under Spin, where no one vouches, the component ignores it.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

pub use registry_core::caller::{Caller, Claimed, HEADER, Identity};

/// The two ends of a connection, put in each request's extensions by `crate::listener::serve`.
#[derive(Debug, Clone, Copy)]
pub struct ConnInfo {
    pub peer: SocketAddr,
    pub local: SocketAddr,
}

/// Finds who is at the other end of `conn` (blocking: reads /proc).
pub fn identify(conn: &ConnInfo) -> Caller {
    let peer = conn.peer.ip().to_canonical();
    if !peer.is_loopback() {
        return Caller::Remote(peer.to_string());
    }
    let Some(inode) = socket_inode(conn) else {
        return Caller::Unknown;
    };
    let procs = Processes::scan(Some(inode));
    match procs.owner {
        Some(pid) => Caller::Local {
            related: procs.related(pid),
        },
        None => Caller::Unknown,
    }
}

/// What `pid` is on this machine.
pub fn claimed(pid: u64) -> Claimed {
    let Ok(pid) = u32::try_from(pid) else {
        return Claimed::Dead;
    };
    if pid <= 1 {
        return Claimed::System;
    }
    match stat(pid) {
        None => Claimed::Dead,
        // Kernel threads are children of kthreadd (pid 2).
        Some(s) if pid == 2 || s.ppid == 2 => Claimed::System,
        Some(s) if matches!(s.state, 'Z' | 'X') => Claimed::Dead,
        Some(_) => Claimed::Alive,
    }
}

/// The inode of the socket at the client's end of `conn`, from the kernel's TCP tables.
fn socket_inode(conn: &ConnInfo) -> Option<u64> {
    let (client, server) = (canonical(conn.peer), canonical(conn.local));
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .find_map(|table| {
            let text = std::fs::read_to_string(table).ok()?;
            text.lines().skip(1).find_map(|line| {
                let f: Vec<&str> = line.split_whitespace().collect();
                let (local, remote, inode) = (f.get(1)?, f.get(2)?, f.get(9)?);
                let matches = parse_endpoint(local)? == client && parse_endpoint(remote)? == server;
                inode.parse().ok().filter(|&i| matches && i != 0)
            })
        })
}

fn canonical(addr: SocketAddr) -> SocketAddr {
    SocketAddr::new(addr.ip().to_canonical(), addr.port())
}

/// `0100007F:1F90` (IPv4) or 32 hex digits and a port (IPv6), as /proc/net/tcp* print
/// them: each 32-bit word in the machine's byte order.
fn parse_endpoint(text: &str) -> Option<SocketAddr> {
    let (ip, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        Some(
            u32::from_str_radix(ip.get(i * 8..i * 8 + 8)?, 16)
                .ok()?
                .to_ne_bytes(),
        )
    };
    let ip: IpAddr = match ip.len() {
        8 => Ipv4Addr::from(word(0)?).into(),
        32 => {
            let mut octets = [0u8; 16];
            for i in 0..4 {
                octets[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            Ipv6Addr::from(octets).to_canonical()
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

struct Stat {
    ppid: u32,
    state: char,
}

fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    let mut rest = text.rsplit_once(')')?.1.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let ppid = rest.next()?.parse().ok()?;
    Some(Stat { ppid, state })
}

/// One pass over /proc: every process's parent, and which one holds a socket.
struct Processes {
    parent: HashMap<u32, u32>,
    owner: Option<u32>,
}

impl Processes {
    fn scan(socket: Option<u64>) -> Self {
        let wanted = socket.map(|inode| format!("socket:[{inode}]"));
        let mut procs = Self {
            parent: HashMap::new(),
            owner: None,
        };
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return procs;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(s) = stat(pid) {
                procs.parent.insert(pid, s.ppid);
            }
            if let (Some(wanted), None) = (&wanted, procs.owner)
                && holds(pid, wanted)
            {
                procs.owner = Some(pid);
            }
        }
        procs
    }

    /// `pid`, its ancestors below init, then its descendants.
    fn related(&self, pid: u32) -> Vec<u32> {
        let mut related = vec![pid];
        let mut at = pid;
        while let Some(&up) = self.parent.get(&at) {
            if up <= 1 || related.contains(&up) {
                break;
            }
            related.push(up);
            at = up;
        }
        let mut frontier = vec![pid];
        while let Some(p) = frontier.pop() {
            for (&child, &parent) in &self.parent {
                if parent == p && !related.contains(&child) {
                    related.push(child);
                    frontier.push(child);
                }
            }
        }
        related
    }
}

/// Whether process `pid` has a file descriptor open on `target` (`socket:[inode]`).
fn holds(pid: u32, target: &str) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|link| link.as_os_str() == target))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_as_the_kernel_prints_them() {
        let v4 = parse_endpoint("0100007F:1F90").unwrap();
        assert_eq!(v4, "127.0.0.1:8080".parse().unwrap());
        let mapped = parse_endpoint("0000000000000000FFFF00000100007F:0050").unwrap();
        assert_eq!(mapped, "127.0.0.1:80".parse().unwrap());
        let v6 = parse_endpoint("00000000000000000000000001000000:0050").unwrap();
        assert_eq!(v6, "[::1]:80".parse().unwrap());
        assert_eq!(parse_endpoint("zz:1"), None);
    }

    /// A real loopback connection made here is traced back to this very process.
    #[test]
    fn finds_the_process_behind_a_loopback_connection() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_server_end, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        let conn = ConnInfo {
            peer,
            local: listener.local_addr().unwrap(),
        };
        match identify(&conn) {
            Caller::Local { related } => {
                assert_eq!(related[0], std::process::id());
                assert!(!related.contains(&1), "init is nobody's relative");
            }
            other => panic!("expected this process, got {other:?}"),
        }
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
