//! The inode of the socket at a loopback connection's client end, and the user owning it.
//!
//! Asked of the kernel for that one connection through `sock_diag` netlink (an exact lookup,
//! as `ss` does), not found in `/proc/net/tcp{,6}`: reading those walks the kernel's whole
//! table of established connections, whose size follows the machine's memory, not the
//! connections open, once per 4 KiB of text read. That made each registration cost about 4
//! ms of kernel time on a 24 GiB machine (`perf` of the registry under load: 56 % of its
//! CPU in `established_get_first`). The tables stay as the fallback where netlink is not
//! allowed (some sandboxes).

use netlink_packet_core::{NLM_F_REQUEST, NetlinkHeader, NetlinkMessage, NetlinkPayload};
use netlink_packet_sock_diag::SockDiagMessage;
use netlink_packet_sock_diag::constants::{AF_INET, AF_INET6, IPPROTO_TCP};
use netlink_packet_sock_diag::inet::{ExtensionFlags, InetRequest, SocketId, StateFlags};
use netlink_sys::protocols::NETLINK_SOCK_DIAG;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The socket at a connection's client end, as the kernel knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Socket {
    pub inode: u64,
    /// The user owning the socket: whoever made the connection, which no client can choose
    /// (the registry caps registrations per user by it), known even where that user's
    /// processes may not be inspected.
    pub uid: u32,
}

/// The inode of the socket whose own address is `client` and whose peer is `server`.
pub fn inode(client: SocketAddr, server: SocketAddr) -> Option<u64> {
    socket(client, server).map(|s| s.inode)
}

/// The socket whose own address is `client` and whose peer is `server`.
pub fn socket(client: SocketAddr, server: SocketAddr) -> Option<Socket> {
    let (client, server) = (canonical(client), canonical(server));
    let ipv4 = client.is_ipv4() && server.is_ipv4();
    let lookup = match diag_socket() {
        Some(mut socket) => {
            let lookup = by_netlink(&mut socket, client, server, ipv4);
            if ipv4 && matches!(lookup, Lookup::NotFound) {
                // An IPv6 socket may have connected to an IPv4 address (v4-mapped).
                by_netlink(&mut socket, client, server, false)
            } else {
                lookup
            }
        }
        None => Lookup::Unavailable,
    };
    match lookup {
        Lookup::Found(socket) => Some(socket),
        Lookup::NotFound => None,
        Lookup::Unavailable => from_proc_tables(client, server),
    }
}

enum Lookup {
    Found(Socket),
    NotFound,
    /// Netlink could not be asked (not permitted, not supported).
    Unavailable,
}

/// A netlink socket connected to the kernel's `sock_diag`, or `None` where that is not
/// allowed.
fn diag_socket() -> Option<netlink_sys::Socket> {
    let mut socket = netlink_sys::Socket::new(NETLINK_SOCK_DIAG).ok()?;
    let kernel = netlink_sys::SocketAddr::new(0, 0);
    socket.bind_auto().ok()?;
    socket.connect(&kernel).ok()?;
    Some(socket)
}

/// One `SOCK_DIAG_BY_FAMILY` request for exactly this connection, among IPv4 sockets if
/// `ipv4`, else among IPv6 ones (IPv4 addresses v4-mapped).
fn by_netlink(
    socket: &mut netlink_sys::Socket,
    client: SocketAddr,
    server: SocketAddr,
    ipv4: bool,
) -> Lookup {
    let (family, source, destination) = match ipv4 {
        true => (AF_INET, client.ip(), server.ip()),
        false => (AF_INET6, v6(client.ip()), v6(server.ip())),
    };
    let request = InetRequest {
        family,
        protocol: IPPROTO_TCP,
        extensions: ExtensionFlags::empty(),
        states: StateFlags::all(),
        socket_id: SocketId {
            source_port: client.port(),
            destination_port: server.port(),
            source_address: source,
            destination_address: destination,
            interface_id: 0,
            // "No cookie": the addresses and ports alone name the socket.
            cookie: [0xff; 8],
        },
    };
    let mut header = NetlinkHeader::default();
    header.flags = NLM_F_REQUEST;
    let mut message = NetlinkMessage::new(header, SockDiagMessage::InetRequest(request).into());
    message.finalize();
    let mut bytes = vec![0; message.buffer_len()];
    message.serialize(&mut bytes);
    if socket.send(&bytes, 0).is_err() {
        return Lookup::Unavailable;
    }
    // The kernel answers while handling the request, so the answer is there already; never
    // wait for one that does not come.
    let mut answer = vec![0; 4096];
    let Ok(length) = socket.recv(&mut &mut answer[..], libc::MSG_DONTWAIT) else {
        return Lookup::Unavailable;
    };
    match NetlinkMessage::<SockDiagMessage>::deserialize(&answer[..length]).map(|m| m.payload) {
        Ok(NetlinkPayload::InnerMessage(SockDiagMessage::InetResponse(found)))
            if found.header.inode != 0 =>
        {
            Lookup::Found(Socket {
                inode: found.header.inode.into(),
                uid: found.header.uid,
            })
        }
        // ENOENT: no such connection (the client has gone).
        Ok(NetlinkPayload::Error(e)) if e.code.is_some_and(|c| c.get() == -libc::ENOENT) => {
            Lookup::NotFound
        }
        _ => Lookup::Unavailable,
    }
}

fn v6(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().into(),
        v6 => v6,
    }
}

fn canonical(addr: SocketAddr) -> SocketAddr {
    SocketAddr::new(addr.ip().to_canonical(), addr.port())
}

/// The same from the text tables, which every Linux has (slow: see the module's doc).
fn from_proc_tables(client: SocketAddr, server: SocketAddr) -> Option<Socket> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .find_map(|table| {
            let text = std::fs::read_to_string(table).ok()?;
            text.lines().skip(1).find_map(|line| {
                let f: Vec<&str> = line.split_whitespace().collect();
                let (local, remote, uid, inode) = (f.get(1)?, f.get(2)?, f.get(7)?, f.get(9)?);
                let matches = parse_endpoint(local)? == client && parse_endpoint(remote)? == server;
                let inode = inode.parse().ok().filter(|&i| matches && i != 0)?;
                Some(Socket {
                    inode,
                    uid: uid.parse().ok()?,
                })
            })
        })
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

    /// Netlink and the text tables name the same socket, for IPv4 and IPv6 connections,
    /// and an IPv6 socket's connection to an IPv4 address.
    #[test]
    fn netlink_and_the_tables_agree() {
        let mapped = |a: SocketAddr| match a.ip() {
            IpAddr::V4(v4) => SocketAddr::new(v4.to_ipv6_mapped().into(), a.port()),
            v6 => SocketAddr::new(v6, a.port()),
        };
        for (address, v4_mapped) in [
            ("127.0.0.1:0", false),
            ("[::1]:0", false),
            ("127.0.0.1:0", true),
        ] {
            let listener = std::net::TcpListener::bind(address).unwrap();
            let server = listener.local_addr().unwrap();
            let target = if v4_mapped { mapped(server) } else { server };
            let client = std::net::TcpStream::connect(target).unwrap();
            let client = client.local_addr().unwrap();
            assert_eq!(
                client.is_ipv6(),
                address.starts_with('[') || v4_mapped,
                "{client}"
            );
            let Some(found) = super::socket(client, server) else {
                panic!("netlink found no socket for {client} -> {server}");
            };
            let tables = from_proc_tables(canonical(client), canonical(server));
            assert_eq!(tables, Some(found), "{address}");
            // The socket is this process's user's.
            let me = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap());
            assert_eq!(found.uid, me, "{address}");
            let gone = SocketAddr::new(client.ip(), 1);
            assert_eq!(super::inode(gone, server), None, "{address}");
        }
    }
}
