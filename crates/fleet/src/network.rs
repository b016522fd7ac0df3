//! Network namespaces as machines: each namespace has its own loopback, ports and address on
//! a bridge, so three `runtime-host up` listen on the same ports as three machines would.
//! The bridge's own address, in this (the test's) namespace, is where the machines reach
//! Redis and where HAProxy reaches them. Nothing is routed anywhere else.
//!
//! Everything made is removed when the [`Network`] is dropped, on a panic too, and what a
//! killed test process left behind is removed by the next one (names carry the pid).

use std::net::Ipv4Addr;
use std::process::{Command, Stdio};

/// What every name made here starts with, then the test process's id.
const PREFIX: &str = "e2efl";

/// One "machine": a network namespace and its address.
#[derive(Clone, Debug)]
pub struct Machine {
    pub namespace: String,
    pub address: Ipv4Addr,
}

impl Machine {
    /// `program` run inside this machine's namespace (`ip netns exec`, which execs it: the
    /// child's pid is the program's).
    pub fn command(&self, program: &std::path::Path) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.namespace]).arg(program);
        cmd
    }
}

pub struct Network {
    bridge: String,
    /// The veth ends on the bridge (removed with their namespace, unless making it failed
    /// half way).
    outside: Vec<String>,
    /// The bridge's address: the test's side of the network.
    pub gateway: Ipv4Addr,
    pub machines: Vec<Machine>,
}

/// Whether this process may make namespaces: root, with `ip` at hand.
pub fn available() -> Result<(), String> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !root {
        return Err("network namespaces need root".into());
    }
    if ip(&["-V"]).is_err() {
        return Err("`ip` (Debian's iproute2) is not installed".into());
    }
    Ok(())
}

impl Network {
    /// `count` machines on one bridge. Panics, having removed what it made, if the kernel
    /// refuses.
    pub fn create(count: usize) -> Self {
        remove_stale();
        let tag = format!("{PREFIX}{}", std::process::id());
        let subnet = free_subnet();
        let mut network = Self {
            bridge: format!("{tag}b"),
            outside: Vec::new(),
            gateway: Ipv4Addr::new(10, 250, subnet, 1),
            machines: Vec::new(),
        };
        let bridge = network.bridge.clone();
        let gateway = format!("{}/24", network.gateway);
        run(&["link", "add", &bridge, "type", "bridge"]);
        run(&["addr", "add", &gateway, "dev", &bridge]);
        run(&["link", "set", &bridge, "up"]);
        for i in 1..=count {
            let namespace = format!("{tag}-{i}");
            let (outside, inside) = (format!("{tag}v{i}"), format!("{tag}p{i}"));
            let address = Ipv4Addr::new(10, 250, subnet, 10 + i as u8);
            run(&["netns", "add", &namespace]);
            network.machines.push(Machine {
                namespace: namespace.clone(),
                address,
            });
            run(&[
                "link", "add", &outside, "type", "veth", "peer", "name", &inside,
            ]);
            run(&["link", "set", &inside, "netns", &namespace]);
            run(&["link", "set", &outside, "master", &bridge]);
            run(&["link", "set", &outside, "up"]);
            run(&["-n", &namespace, "link", "set", "lo", "up"]);
            run(&["-n", &namespace, "link", "set", &inside, "name", "eth0"]);
            let cidr = format!("{address}/24");
            run(&["-n", &namespace, "addr", "add", &cidr, "dev", "eth0"]);
            run(&["-n", &namespace, "link", "set", "eth0", "up"]);
        }
        network
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        // Deleting a namespace deletes its end of the veth pair, and with it the other end.
        for m in &self.machines {
            let _ = ip(&["netns", "del", &m.namespace]);
        }
        for veth in &self.outside {
            let _ = ip(&["link", "del", veth]);
        }
        let _ = ip(&["link", "del", &self.bridge]);
    }
}

/// `ip ARGS`, panicking with what it said if it fails. A panic in [`Network::create`] drops
/// the partly made network, which removes it.
fn run(args: &[&str]) {
    if let Err(e) = ip(args) {
        panic!("ip {}: {e}", args.join(" "));
    }
}

fn ip(args: &[&str]) -> Result<String, String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

/// A `10.250.X.0/24` no interface of this machine has an address in.
fn free_subnet() -> u8 {
    let used = ip(&["-o", "-4", "addr", "show"]).unwrap_or_default();
    (1..=254)
        .find(|x| !used.contains(&format!(" 10.250.{x}.")))
        .expect("a free 10.250.X.0/24")
}

/// Namespaces (and the hosts still running in them) and bridges a test process that no
/// longer exists left behind (it was killed before its drop ran). HAProxy and Redis ran in
/// the test's own namespace on loopback ports; a killed test leaves those to the machine.
fn remove_stale() {
    let dead = |name: &str| {
        let digits: String = name
            .trim_start_matches(PREFIX)
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        !digits.is_empty() && !std::path::Path::new(&format!("/proc/{digits}")).exists()
    };
    let namespaces = ip(&["netns", "list"]).unwrap_or_default();
    for name in namespaces
        .lines()
        .filter_map(|l| l.split_whitespace().next())
    {
        if name.starts_with(PREFIX) && dead(name) {
            // Its hosts outlived the test that started them; they go first.
            let pids = ip(&["netns", "pids", name]).unwrap_or_default();
            for pid in pids.split_whitespace() {
                let _ = Command::new("kill").args(["-KILL", pid]).status();
            }
            let _ = ip(&["netns", "del", name]);
        }
    }
    for kind in ["veth", "bridge"] {
        let links = ip(&["-o", "link", "show", "type", kind]).unwrap_or_default();
        // `5: e2efl12v1@if4: <...`: the name is the second field, before any `@`.
        for name in links.lines().filter_map(|l| l.split(':').nth(1)) {
            let name = name.trim().split('@').next().unwrap_or_default();
            if name.starts_with(PREFIX) && dead(name) {
                let _ = ip(&["link", "del", name]);
            }
        }
    }
}
