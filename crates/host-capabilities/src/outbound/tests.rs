use super::address::{canonical, restricted};
use super::rules::AllowedHosts;
use std::net::IpAddr;

fn hosts(entries: &[&str]) -> AllowedHosts {
    AllowedHosts::parse(entries).unwrap()
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn refused(entry: &str) -> String {
    AllowedHosts::parse(&[entry]).unwrap_err()
}

#[test]
fn a_name_is_admitted_at_its_scheme_and_the_schemes_default_port() {
    let h = hosts(&["https://api.example.com"]);
    assert!(h.admits_name("https", "api.example.com", 443));
    assert!(!h.admits_name("http", "api.example.com", 443));
    assert!(!h.admits_name("https", "api.example.com", 8443));
    assert!(!h.admits_name("https", "example.com", 443));
    assert!(!h.admits_name("https", "other.api.example.com", 443));
    let h = hosts(&["http://Localhost."]);
    assert!(
        h.admits_name("http", "localhost", 80),
        "case and a final dot"
    );
}

#[test]
fn ports_are_a_number_a_range_without_its_end_or_any() {
    let h = hosts(&["http://a.example:8080", "http://b.example:8000..8002"]);
    assert!(h.admits_name("http", "a.example", 8080));
    assert!(!h.admits_name("http", "a.example", 80));
    assert!(h.admits_name("http", "b.example", 8000));
    assert!(h.admits_name("http", "b.example", 8001));
    assert!(!h.admits_name("http", "b.example", 8002));
    let h = hosts(&["https://c.example:*", "http://d.example:65535"]);
    assert!(h.admits_name("https", "c.example", 1));
    assert!(h.admits_name("http", "d.example", 65535));
}

#[test]
fn wildcards_stand_for_subdomains_hosts_and_schemes() {
    let h = hosts(&["https://*.example.com:443"]);
    assert!(h.admits_name("https", "api.example.com", 443));
    assert!(h.admits_name("https", "a.b.example.com", 443));
    assert!(
        !h.admits_name("https", "example.com", 443),
        "not the domain itself"
    );
    assert!(!h.admits_name("https", "evilexample.com", 443));
    let h = hosts(&["*://*:*"]);
    assert!(h.admits_name("http", "anything.example", 1234));
    assert!(h.admits_address("https", ip("8.8.8.8"), 443));
    let h = hosts(&["*://api.example.com:443"]);
    assert!(h.admits_name("http", "api.example.com", 443));
}

#[test]
fn addresses_and_networks_admit_addresses_only() {
    let h = hosts(&["http://203.0.113.7:8080", "https://198.51.100.0/24:443"]);
    assert!(h.admits_address("http", ip("203.0.113.7"), 8080));
    assert!(!h.admits_address("http", ip("203.0.113.8"), 8080));
    assert!(h.admits_address("https", ip("198.51.100.200"), 443));
    assert!(!h.admits_address("https", ip("198.51.101.1"), 443));
    assert!(!h.admits_name("http", "203.0.113.7.nip.io", 8080));
    assert!(h.names_exactly("http", ip("203.0.113.7"), 8080));
    assert!(
        !h.names_exactly("https", ip("198.51.100.1"), 443),
        "a network names no address exactly"
    );
    let h = hosts(&["http://[::1]:8080", "http://[fd00:ec2::254]"]);
    assert!(h.names_exactly("http", ip("::1"), 8080));
    assert!(h.names_exactly("http", ip("fd00:ec2::254"), 80));
    assert!(!h.names_exactly("http", ip("::1"), 80));
}

#[test]
fn nothing_is_admitted_without_rules() {
    let h = AllowedHosts::default();
    assert!(h.is_empty());
    assert!(!h.admits_name("https", "example.com", 443));
    assert!(!h.admits_address("https", ip("8.8.8.8"), 443));
}

#[test]
fn malformed_entries_are_refused_with_the_reason() {
    assert!(refused("api.example.com").contains("no scheme"));
    assert!(refused("*").contains("no scheme"));
    assert!(refused("insecure:allow-all").contains("*://*:*"));
    assert!(refused("https://api.example.com/v1").contains("path"));
    assert!(refused("https://api.example.com:http").contains("not a number"));
    assert!(refused("https://api.example.com:70000").contains("not a number"));
    assert!(refused("https://api.*.com").contains("`*` stands only"));
    assert!(refused("https://*example.com").contains("`*` stands only"));
    assert!(refused("ftp://files.example.com").contains("no default"));
    assert!(refused("*://api.example.com").contains("no default"));
    assert!(refused("h2c3://x.example:1").contains("scheme"));
    assert!(refused("http://self").contains("not supported"));
    assert!(refused("http://[::1:80").contains("not closed"));
    assert!(refused("http://bad host").contains("not a host name"));
    // A trailing slash is no path.
    assert!(AllowedHosts::parse(&["https://api.example.com/"]).is_ok());
    assert!(AllowedHosts::parse(&["redis://cache.example"]).is_ok());
}

#[test]
fn loopback_private_link_local_and_metadata_addresses_are_restricted() {
    for (addr, kind) in [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("64:ff9b::7f00:1", "loopback"),
        ("0.0.0.0", "unspecified (this machine)"),
        ("::", "unspecified (this machine)"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("fc00::1", "private"),
        ("fd12:3456::1", "private"),
        ("100.100.100.200", "shared (carrier-grade NAT)"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("169.254.169.254", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("::ffff:169.254.169.254", "cloud metadata"),
        ("224.0.0.1", "multicast or broadcast"),
    ] {
        assert_eq!(restricted(ip(addr)), Some(kind), "{addr}");
    }
    for public in [
        "8.8.8.8",
        "172.32.0.1",
        "192.169.0.1",
        "2606:4700::1111",
        "100.128.0.1",
    ] {
        assert_eq!(restricted(ip(public)), None, "{public}");
    }
    assert_eq!(canonical(ip("::ffff:10.0.0.1")), ip("10.0.0.1"));
}
