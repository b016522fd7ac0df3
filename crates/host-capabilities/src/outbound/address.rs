//! The addresses a component reaches only where a rule names them exactly: this machine
//! (its registry, chat and admin ports listen on loopback), the private networks behind it,
//! link-local addresses and the clouds' metadata services (which hand out credentials).
//! Spin leaves these to `allowed_outbound_hosts` alone; here a wildcard (`*`,
//! `*.example.com`, a network) never admits them, and neither does a host name that
//! resolves to one (`evil.example -> 127.0.0.1`), since whoever runs its DNS chooses that.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` needs a rule of its own (`"loopback"`, `"private"`, ...), or `None` for an
/// address on the public internet. An IPv6 address carrying an IPv4 one (mapped,
/// `::ffff:127.0.0.1`, or NAT64's `64:ff9b::/96`) is judged by the IPv4 address.
pub fn restricted(ip: IpAddr) -> Option<&'static str> {
    match canonical(ip) {
        IpAddr::V4(v4) => restricted_v4(v4),
        IpAddr::V6(v6) => restricted_v6(v6),
    }
}

/// `ip`, or the IPv4 address an IPv6 one carries: what the connection reaches, and how a
/// rule names it (`127.0.0.1` names `::ffff:127.0.0.1`).
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return IpAddr::V4(v4);
            }
            let s = v6.segments();
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let [a, b] = s[6].to_be_bytes();
                let [c, d] = s[7].to_be_bytes();
                return IpAddr::V4(Ipv4Addr::new(a, b, c, d));
            }
            ip
        }
        IpAddr::V4(_) => ip,
    }
}

fn restricted_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    Some(if ip == Ipv4Addr::new(169, 254, 169, 254) {
        "cloud metadata"
    } else if a == 0 {
        // 0.0.0.0 connects to this machine on Linux.
        "unspecified (this machine)"
    } else if ip.is_loopback() {
        "loopback"
    } else if ip.is_private() {
        "private"
    } else if a == 100 && (64..128).contains(&b) {
        // Carrier-grade NAT, also used by clouds inside (e.g. a metadata service at
        // 100.100.100.200).
        "shared (carrier-grade NAT)"
    } else if ip.is_link_local() {
        "link-local"
    } else if ip.is_multicast() || ip.is_broadcast() {
        "multicast or broadcast"
    } else {
        return None;
    })
}

fn restricted_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    Some(
        if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
            "cloud metadata"
        } else if ip.is_unspecified() {
            "unspecified (this machine)"
        } else if ip.is_loopback() {
            "loopback"
        } else if first & 0xfe00 == 0xfc00 {
            "private"
        } else if first & 0xffc0 == 0xfe80 {
            "link-local"
        } else if first & 0xffc0 == 0xfec0 {
            // Deprecated site-local addresses, private in effect.
            "private"
        } else if ip.is_multicast() {
            "multicast or broadcast"
        } else {
            return None;
        },
    )
}
