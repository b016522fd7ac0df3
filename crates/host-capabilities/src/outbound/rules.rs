//! Spin's `allowed_outbound_hosts`, parsed once when a component's grants are made: each entry
//! `<scheme>://<host>[:<port>]` as Spin's `spin-outbound-networking` reads it, and the one
//! question a request asks of them, whether a rule admits its scheme, host and port.
//!
//! - scheme: a name (`http`, `https`) or `*`;
//! - host: a name (`api.example.com`), `*.example.com` (any subdomain, not the domain
//!   itself), `*`, an IP address (`127.0.0.1`, `[::1]`) or a network (`10.0.0.0/8`);
//! - port: a number, a range `8000..8100` (end excluded), `*`, or none: the scheme's own
//!   (80 for `http`, 443 for `https`).
//!
//! `*://*:*` admits everything Spin would; what it admits here is still bounded by
//! [`super::address`]: a loopback, private, link-local or metadata address is reached only
//! where a rule names that very address ([`AllowedHosts::names_exactly`]).

use std::net::IpAddr;

/// One component's rules; none admits nothing (Spin's default).
#[derive(Debug, Clone, Default)]
pub struct AllowedHosts {
    rules: Vec<Rule>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    /// `None`: any scheme.
    scheme: Option<String>,
    host: HostRule,
    port: PortRule,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostRule {
    Any,
    /// `*.example.com`, kept as `.example.com`.
    Subdomain(String),
    Name(String),
    Net(Net),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PortRule {
    Any,
    /// `start..end`, `end` excluded (a single port is `p..p+1`).
    Range(u16, u32),
}

/// An address with a prefix length: `10.0.0.0/8`, or one address (`/32`, `/128`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Net {
    addr: IpAddr,
    prefix: u8,
}

impl Net {
    fn parse(text: &str) -> Option<Self> {
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr: IpAddr = addr.parse().ok()?;
        let width = bits(addr).1;
        let prefix = match prefix {
            Some(p) => p.parse::<u8>().ok().filter(|p| *p <= width)?,
            None => width,
        };
        Some(Self { addr, prefix })
    }

    fn single(&self) -> Option<IpAddr> {
        (self.prefix == bits(self.addr).1).then_some(self.addr)
    }

    fn contains(&self, ip: IpAddr) -> bool {
        let ((net, width), (ip, ip_width)) = (bits(self.addr), bits(ip));
        if width != ip_width {
            return false;
        }
        let host_bits = u32::from(width - self.prefix);
        let mask = u128::MAX.checked_shl(host_bits).unwrap_or(0);
        net & mask == ip & mask
    }
}

/// An address as a number, and how many bits it has.
fn bits(ip: IpAddr) -> (u128, u8) {
    match ip {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)), 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    }
}

/// The port a URL without one uses, as Spin knows them.
pub fn default_port(scheme: &str) -> Option<u16> {
    Some(match scheme {
        "http" => 80,
        "https" => 443,
        "postgres" => 5432,
        "mysql" => 3306,
        "redis" => 6379,
        "mqtt" => 1883,
        _ => return None,
    })
}

impl AllowedHosts {
    /// Every entry parsed; the error names the first bad one and why.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Self, String> {
        let rules = entries
            .iter()
            .map(|e| Rule::parse(e.as_ref()).map_err(|why| format!("{:?}: {why}", e.as_ref())))
            .collect::<Result<_, _>>()?;
        Ok(Self { rules })
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether a rule admits host name `name` (lower case, no trailing dot) at `scheme` and
    /// `port`. The addresses it resolves to are checked apart ([`Self::names_exactly`]).
    pub fn admits_name(&self, scheme: &str, name: &str, port: u16) -> bool {
        self.matching(scheme, port).any(|r| match &r.host {
            HostRule::Any => true,
            HostRule::Subdomain(suffix) => name.ends_with(suffix.as_str()),
            HostRule::Name(n) => n == name,
            HostRule::Net(_) => false,
        })
    }

    /// Whether a rule admits address `ip` (written in the URL) at `scheme` and `port`, by a
    /// wildcard or a network that contains it.
    pub fn admits_address(&self, scheme: &str, ip: IpAddr, port: u16) -> bool {
        self.matching(scheme, port).any(|r| match &r.host {
            HostRule::Any => true,
            HostRule::Net(net) => net.contains(ip),
            HostRule::Subdomain(_) | HostRule::Name(_) => false,
        })
    }

    /// Whether a rule names `ip` itself (not a wildcard, not a wider network) at `scheme`
    /// and `port`: what a loopback, private, link-local or metadata address needs.
    pub fn names_exactly(&self, scheme: &str, ip: IpAddr, port: u16) -> bool {
        self.matching(scheme, port)
            .any(|r| matches!(&r.host, HostRule::Net(net) if net.single() == Some(ip)))
    }

    fn matching<'a>(&'a self, scheme: &'a str, port: u16) -> impl Iterator<Item = &'a Rule> {
        self.rules.iter().filter(move |r| {
            r.scheme.as_deref().is_none_or(|s| s == scheme)
                && match r.port {
                    PortRule::Any => true,
                    PortRule::Range(start, end) => port >= start && u32::from(port) < end,
                }
        })
    }
}

impl Rule {
    fn parse(entry: &str) -> Result<Self, String> {
        let entry = entry.trim();
        if entry == "insecure:allow-all" {
            return Err("not accepted; `*://*:*` admits every host (and is rarely wise)".into());
        }
        let Some((scheme, rest)) = entry.split_once("://") else {
            return Err(
                "no scheme: write <scheme>://<host>[:<port>], e.g. https://api.example.com \
                        (`*` may stand for each part)"
                    .into(),
            );
        };
        let scheme = match scheme {
            "*" => None,
            s if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphabetic()) => {
                Some(s.to_ascii_lowercase())
            }
            s => return Err(format!("scheme {s:?} is not `*` or a name of letters")),
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (host, port) = split_host_port(rest)?;
        let port = match port {
            None => {
                let scheme = scheme.as_deref().unwrap_or("*");
                let p = default_port(scheme).ok_or_else(|| {
                    format!("no port, and scheme {scheme:?} has no default one: add `:<port>`")
                })?;
                PortRule::Range(p, u32::from(p) + 1)
            }
            Some("*") => PortRule::Any,
            Some(p) => parse_ports(p)?,
        };
        Ok(Self {
            scheme,
            host: parse_host(host)?,
            port,
        })
    }
}

/// `host[:port]`, the host possibly an IPv6 address in brackets (or a network without them,
/// `fc00::/7:*`, as Spin splits at the last colon).
fn split_host_port(rest: &str) -> Result<(&str, Option<&str>), String> {
    if let Some(inner) = rest.strip_prefix('[') {
        let (host, after) = inner
            .split_once(']')
            .ok_or("an IPv6 address opened with `[` is not closed")?;
        return match after {
            "" => Ok((host, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((host, Some(port))),
                None => Err(format!("{after:?} after the address is not `:<port>`")),
            },
        };
    }
    Ok(match rest.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    })
}

fn parse_ports(p: &str) -> Result<PortRule, String> {
    let number = |n: &str| {
        n.parse::<u16>()
            .map_err(|_| format!("port {n:?} is not a number from 0 to 65535"))
    };
    if p.contains('/') {
        return Err("a path is not allowed, only <scheme>://<host>[:<port>]".into());
    }
    Ok(match p.split_once("..") {
        Some((start, end)) => PortRule::Range(number(start)?, u32::from(number(end)?)),
        None => {
            let p = number(p)?;
            PortRule::Range(p, u32::from(p) + 1)
        }
    })
}

fn parse_host(host: &str) -> Result<HostRule, String> {
    let host = host.trim().to_ascii_lowercase();
    let host = host.strip_suffix('.').unwrap_or(&host);
    if host == "*" {
        return Ok(HostRule::Any);
    }
    if host == "self" || host == "self.alt" {
        return Err("Spin's service chaining (`self`) is not supported by runtime-host".into());
    }
    if host.starts_with('{') {
        return Err("host lists are not supported (one entry per host)".into());
    }
    if let Some(net) = Net::parse(host) {
        return Ok(HostRule::Net(net));
    }
    if host.contains('/') {
        return Err(format!(
            "{host:?} is neither a host nor a network: a path is not allowed"
        ));
    }
    let (name, rule): (&str, fn(String) -> HostRule) = match host.strip_prefix("*.") {
        Some(domain) => (domain, |d| HostRule::Subdomain(format!(".{d}"))),
        None => (host, HostRule::Name),
    };
    let plain = |label: &str| {
        !label.is_empty()
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if host.contains('*') && !name.split('.').all(plain) {
        return Err(format!(
            "{host:?}: `*` stands only for a whole host (`*`) or its subdomains (`*.example.com`)"
        ));
    }
    if !name.split('.').all(plain) {
        return Err(format!("{host:?} is not a host name"));
    }
    Ok(rule(name.to_owned()))
}
