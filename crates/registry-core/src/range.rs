//! The range of ports the registry hands out.

use edge_api::registry::{FIRST_MODEL_PORT, LAST_MODEL_PORT, REGISTRY_DEFAULT_PORT};

/// Largest range accepted; keeps the lease table (32 bytes a port) under 2 MiB.
pub const MAX_RANGE_LEN: u32 = 60_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    pub first: u16,
    pub last: u16,
}

impl Default for PortRange {
    fn default() -> Self {
        Self {
            first: FIRST_MODEL_PORT,
            last: LAST_MODEL_PORT,
        }
    }
}

impl PortRange {
    /// Parses `A-B` (inclusive). The range must not include the registry's own port 5000.
    pub fn parse(s: &str) -> Result<Self, String> {
        let (a, b) = s
            .trim()
            .split_once('-')
            .ok_or_else(|| format!("port range `{s}` must look like 5100-5999"))?;
        let parse = |p: &str| {
            p.trim()
                .parse::<u16>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("`{p}` in port range `{s}` is not a port number"))
        };
        let (first, last) = (parse(a)?, parse(b)?);
        if first > last {
            return Err(format!("port range `{s}` is empty (first port above last)"));
        }
        if (first..=last).contains(&REGISTRY_DEFAULT_PORT) {
            return Err(format!(
                "port range `{s}` includes {REGISTRY_DEFAULT_PORT}, which the specification reserves for the port registry"
            ));
        }
        let range = Self { first, last };
        if range.len() > MAX_RANGE_LEN {
            return Err(format!(
                "port range `{s}` is larger than {MAX_RANGE_LEN} ports"
            ));
        }
        Ok(range)
    }

    pub fn len(&self) -> u32 {
        u32::from(self.last) - u32::from(self.first) + 1
    }

    /// Live registrations one local user may hold unless configured otherwise: a quarter of
    /// the range, so that one user's processes (each with its own per-process allowance)
    /// cannot take every port from the others, at most 256 and at least 8 (a small
    /// development range stays usable by its one user).
    pub fn default_per_user_cap(&self) -> u32 {
        (self.len() / 4).clamp(8, 256)
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn contains(&self, port: u16) -> bool {
        (self.first..=self.last).contains(&port)
    }

    pub fn index(&self, port: u16) -> Option<usize> {
        self.contains(port).then(|| usize::from(port - self.first))
    }

    pub fn port(&self, index: usize) -> u16 {
        self.first + index as u16
    }
}

impl std::fmt::Display for PortRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.first, self.last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        assert_eq!(PortRange::parse("5100-5999").unwrap(), PortRange::default());
        assert_eq!(PortRange::parse(" 6000 - 6000 ").unwrap().len(), 1);
        for bad in [
            "",
            "5100",
            "5999-5100",
            "4990-5010",
            "0-10",
            "a-b",
            "1-65535",
        ] {
            assert!(PortRange::parse(bad).is_err(), "{bad}");
        }
        let r = PortRange::default();
        assert_eq!(r.index(5100), Some(0));
        assert_eq!(r.index(5000), None);
        assert_eq!(r.port(899), 5999);
    }

    #[test]
    fn per_user_caps_stay_well_under_the_range() {
        assert_eq!(PortRange::default().default_per_user_cap(), 225);
        assert_eq!(
            PortRange::parse("5100-5199")
                .unwrap()
                .default_per_user_cap(),
            25
        );
        assert_eq!(
            PortRange::parse("6000-6003")
                .unwrap()
                .default_per_user_cap(),
            8
        );
        assert_eq!(
            PortRange::parse("10000-60000")
                .unwrap()
                .default_per_user_cap(),
            256
        );
    }
}
