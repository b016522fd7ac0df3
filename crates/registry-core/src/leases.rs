//! The lease table: for every assignable port, until when it is leased and to whom.
//!
//! Stored as one binary value: an 8-byte header (`b"LT"`, format version, reserved, first
//! port, last port; little-endian), then one 34-byte entry per port that holds a lease (port;
//! lease expiry in Unix milliseconds; owner hash; the 128-bit registration id holding the
//! lease). Holding the whole id lets a retried registration be recognised and answered from
//! this one atomic value, even before the registration's detail record is written. One
//! compare-and-swap of this value makes assignment, renewal and release atomic.
//!
//! Only leased ports are stored (format 2), so the value grows with the registrations, not
//! with the range: a machine running dozens of models moves about a kilobyte per operation
//! instead of 28.8 KB for the default 900-port range, which is what decides the registry's
//! speed on a networked store (Redis). Format 1 (32 bytes for every port of the range) is
//! still read, so a data directory written before keeps its leases.

use crate::range::PortRange;
use edge_api::registry::REGISTRY_DEFAULT_PORT;

const MAGIC: &[u8; 2] = b"LT";
/// Every port of the range, 32 bytes each (read only).
const DENSE: u8 = 1;
/// Leased ports only, 34 bytes each: what is written.
const SPARSE: u8 = 2;
const HEADER: usize = 8;
const DENSE_ENTRY: usize = 32;
const SPARSE_ENTRY: usize = 34;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lease {
    /// Unix milliseconds after which the lease is void; 0 = never leased or released.
    pub expires_at_ms: u64,
    /// [`owner_hash`] of the registering process.
    pub owner: u64,
    /// The registration holding the lease ([`parse_id`] of its UUID): a stored record with
    /// another id is stale (an expired or released registration of the same port).
    pub id: u128,
}

/// A registration id (UUID text, with or without hyphens) as a number; `None` if malformed.
pub fn parse_id(registration_id: &str) -> Option<u128> {
    let hex: String = registration_id.chars().filter(|c| *c != '-').collect();
    if hex.len() != 32 {
        return None;
    }
    u128::from_str_radix(&hex, 16).ok()
}

impl Lease {
    pub fn is_live(&self, now_ms: u64) -> bool {
        self.expires_at_ms > now_ms
    }
}

/// Identifies "the same process registering the same model again" (FNV-1a over the process
/// id, app name and model name). A match is confirmed against the stored record before use.
pub fn owner_hash(process_id: u32, app_name: &str, model_name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(&process_id.to_le_bytes());
    eat(&[0xff]);
    eat(app_name.as_bytes());
    eat(&[0xff]);
    eat(model_name.as_bytes());
    h
}

/// Where a registration goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assignment {
    /// The port, and the message explaining the choice.
    Port { port: u16, message: String },
    /// Every port of the range is leased.
    Exhausted,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseTable {
    range: PortRange,
    leases: Vec<Lease>,
}

impl LeaseTable {
    pub fn new(range: PortRange) -> Self {
        Self {
            range,
            leases: vec![Lease::default(); range.len() as usize],
        }
    }

    pub fn range(&self) -> PortRange {
        self.range
    }

    /// Reads a stored table (or starts an empty one), carried over to `range` if the
    /// configured range changed: leases of ports outside the new range are dropped.
    pub fn decode(range: PortRange, bytes: Option<&[u8]>) -> Result<Self, String> {
        let Some(bytes) = bytes else {
            return Ok(Self::new(range));
        };
        if bytes.len() < HEADER || &bytes[..2] != MAGIC {
            return Err("stored lease table has an unknown format".into());
        }
        let stored = PortRange {
            first: u16::from_le_bytes([bytes[4], bytes[5]]),
            last: u16::from_le_bytes([bytes[6], bytes[7]]),
        };
        let body = &bytes[HEADER..];
        let consistent = stored.first <= stored.last
            && match bytes[2] {
                DENSE => body.len() == DENSE_ENTRY * stored.len() as usize,
                SPARSE => body.len() % SPARSE_ENTRY == 0,
                _ => return Err("stored lease table has an unknown format".into()),
            };
        if !consistent {
            return Err("stored lease table is truncated or inconsistent".into());
        }
        let mut table = Self::new(range);
        let mut put = |port: u16, entry: &[u8]| {
            let lease = Lease {
                expires_at_ms: u64::from_le_bytes(entry[..8].try_into().unwrap()),
                owner: u64::from_le_bytes(entry[8..16].try_into().unwrap()),
                id: u128::from_le_bytes(entry[16..32].try_into().unwrap()),
            };
            if let Some(j) = range.index(port) {
                table.leases[j] = lease;
            }
        };
        if bytes[2] == DENSE {
            for (i, entry) in body.chunks_exact(DENSE_ENTRY).enumerate() {
                put(stored.port(i), entry);
            }
        } else {
            for entry in body.chunks_exact(SPARSE_ENTRY) {
                put(u16::from_le_bytes([entry[0], entry[1]]), &entry[2..]);
            }
        }
        Ok(table)
    }

    /// The stored form (format 2): leased ports only, in port order.
    pub fn encode(&self) -> Vec<u8> {
        let leased = self.leases.iter().filter(|l| l.expires_at_ms != 0).count();
        let mut out = Vec::with_capacity(HEADER + SPARSE_ENTRY * leased);
        out.extend_from_slice(MAGIC);
        out.push(SPARSE);
        out.push(0);
        out.extend_from_slice(&self.range.first.to_le_bytes());
        out.extend_from_slice(&self.range.last.to_le_bytes());
        for (i, l) in self.leases.iter().enumerate() {
            if l.expires_at_ms == 0 {
                continue;
            }
            out.extend_from_slice(&self.range.port(i).to_le_bytes());
            out.extend_from_slice(&l.expires_at_ms.to_le_bytes());
            out.extend_from_slice(&l.owner.to_le_bytes());
            out.extend_from_slice(&l.id.to_le_bytes());
        }
        out
    }

    pub fn get(&self, port: u16) -> Option<Lease> {
        self.range.index(port).map(|i| self.leases[i])
    }

    pub fn is_live(&self, port: u16, now_ms: u64) -> bool {
        self.get(port).is_some_and(|l| l.is_live(now_ms))
    }

    pub fn set(&mut self, port: u16, lease: Lease) {
        if let Some(i) = self.range.index(port) {
            self.leases[i] = lease;
        }
    }

    pub fn release(&mut self, port: u16) {
        self.set(port, Lease::default());
    }

    /// Clears leases that have expired; returns their ports (whose records can go).
    pub fn sweep(&mut self, now_ms: u64) -> Vec<u16> {
        let mut freed = Vec::new();
        for (i, l) in self.leases.iter_mut().enumerate() {
            if l.expires_at_ms != 0 && !l.is_live(now_ms) {
                *l = Lease::default();
                freed.push(self.range.port(i));
            }
        }
        freed
    }

    /// Live leases, by port.
    pub fn live(&self, now_ms: u64) -> impl Iterator<Item = (u16, Lease)> + '_ {
        self.leases
            .iter()
            .enumerate()
            .filter(move |(_, l)| l.is_live(now_ms))
            .map(|(i, l)| (self.range.port(i), *l))
    }

    /// Live ports leased to `owner`.
    pub fn owned_by(&self, owner: u64, now_ms: u64) -> Vec<u16> {
        self.live(now_ms)
            .filter(|(_, l)| l.owner == owner)
            .map(|(p, _)| p)
            .collect()
    }

    fn lowest_free(&self, now_ms: u64) -> Option<u16> {
        self.leases
            .iter()
            .position(|l| !l.is_live(now_ms))
            .map(|i| self.range.port(i))
    }

    /// Picks a port: `preferred` when it is assignable and free, else the lowest free one,
    /// with a message saying which and why.
    pub fn choose(&self, preferred: Option<u16>, now_ms: u64) -> Assignment {
        if let Some(p) = preferred
            && self.range.contains(p)
            && !self.is_live(p, now_ms)
        {
            return Assignment::Port {
                port: p,
                message: format!("assigned preferred port {p}"),
            };
        }
        let Some(port) = self.lowest_free(now_ms) else {
            return Assignment::Exhausted;
        };
        let message = match preferred {
            None => format!("assigned port {port}"),
            Some(p) if p == REGISTRY_DEFAULT_PORT => {
                format!("preferred port {p} is reserved for the registry; assigned port {port}")
            }
            Some(p) if !self.range.contains(p) => format!(
                "preferred port {p} is outside the assignable range {}; assigned port {port}",
                self.range
            ),
            Some(p) => format!("preferred port {p} is in use; assigned port {port}"),
        };
        Assignment::Port { port, message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> PortRange {
        PortRange::parse("5100-5103").unwrap()
    }

    fn lease(until: u64) -> Lease {
        Lease {
            expires_at_ms: until,
            owner: 7,
            id: 9,
        }
    }

    #[test]
    fn encodes_leased_ports_only_and_decodes_both_formats() {
        let mut t = LeaseTable::new(small());
        assert_eq!(t.encode().len(), 8, "an empty table is its header");
        t.set(5101, lease(99));
        t.set(5103, lease(98));
        let bytes = t.encode();
        assert_eq!(bytes.len(), 8 + 2 * 34);
        assert_eq!(LeaseTable::decode(small(), Some(&bytes)).unwrap(), t);
        assert!(LeaseTable::decode(small(), Some(b"junk")).is_err());
        assert!(LeaseTable::decode(small(), Some(&bytes[..20])).is_err());
        // Format 1, as earlier releases wrote it: every port, 32 bytes each.
        let mut dense = vec![b'L', b'T', 1, 0];
        dense.extend_from_slice(&5100u16.to_le_bytes());
        dense.extend_from_slice(&5103u16.to_le_bytes());
        for port in 5100..=5103u16 {
            let l = t.get(port).unwrap();
            dense.extend_from_slice(&l.expires_at_ms.to_le_bytes());
            dense.extend_from_slice(&l.owner.to_le_bytes());
            dense.extend_from_slice(&l.id.to_le_bytes());
        }
        assert_eq!(LeaseTable::decode(small(), Some(&dense)).unwrap(), t);
        assert!(LeaseTable::decode(small(), Some(&dense[..40])).is_err());
        let mut unknown = bytes.clone();
        unknown[2] = 3;
        assert!(LeaseTable::decode(small(), Some(&unknown)).is_err());
    }

    #[test]
    fn range_change_keeps_overlapping_leases() {
        let mut t = LeaseTable::new(small());
        t.set(5100, lease(99));
        t.set(5103, lease(99));
        let wider = PortRange::parse("5102-5110").unwrap();
        let moved = LeaseTable::decode(wider, Some(&t.encode())).unwrap();
        assert!(moved.is_live(5103, 1));
        assert!(moved.get(5100).is_none());
    }

    #[test]
    fn chooses_preferred_else_lowest_with_reason() {
        let mut t = LeaseTable::new(small());
        let pick = |t: &LeaseTable, p| match t.choose(p, 10) {
            Assignment::Port { port, message } => (port, message),
            Assignment::Exhausted => panic!("exhausted"),
        };
        assert_eq!(pick(&t, None).0, 5100);
        assert_eq!(
            pick(&t, Some(5102)),
            (5102, "assigned preferred port 5102".into())
        );
        t.set(5102, lease(100));
        let (p, m) = pick(&t, Some(5102));
        assert_eq!(p, 5100);
        assert!(m.contains("in use"), "{m}");
        let (_, m) = pick(&t, Some(5000));
        assert!(m.contains("reserved"), "{m}");
        let (_, m) = pick(&t, Some(8080));
        assert!(m.contains("outside"), "{m}");
        // An expired lease is free again.
        assert_eq!(
            t.choose(Some(5102), 100),
            Assignment::Port {
                port: 5102,
                message: "assigned preferred port 5102".into()
            }
        );
        for p in [5100, 5101, 5103] {
            t.set(p, lease(100));
        }
        assert_eq!(t.choose(None, 10), Assignment::Exhausted);
    }

    #[test]
    fn sweep_frees_only_expired() {
        let mut t = LeaseTable::new(small());
        t.set(5100, lease(50));
        t.set(5101, lease(150));
        assert_eq!(t.sweep(100), vec![5100]);
        assert_eq!(t.live(100).map(|(p, _)| p).collect::<Vec<_>>(), vec![5101]);
        assert!(t.sweep(100).is_empty());
    }

    #[test]
    fn ids_parse_from_uuid_text() {
        assert_eq!(
            parse_id("0b7e6a4c-2f1d-4b8e-9a55-3c2d1e0f9a8b"),
            Some(0x0b7e6a4c2f1d4b8e9a553c2d1e0f9a8b)
        );
        assert_eq!(
            parse_id("0b7e6a4c2f1d4b8e9a553c2d1e0f9a8b"),
            Some(0x0b7e6a4c2f1d4b8e9a553c2d1e0f9a8b)
        );
        assert_eq!(parse_id("not-a-uuid"), None);
    }

    #[test]
    fn owner_hash_separates_fields() {
        assert_ne!(owner_hash(1, "ab", "c"), owner_hash(1, "a", "bc"));
        assert_ne!(owner_hash(1, "a", "b"), owner_hash(2, "a", "b"));
        assert_eq!(owner_hash(3, "a", "b"), owner_hash(3, "a", "b"));
        let t = {
            let mut t = LeaseTable::new(small());
            t.set(
                5101,
                Lease {
                    expires_at_ms: 99,
                    owner: owner_hash(3, "a", "b"),
                    id: 1,
                },
            );
            t
        };
        assert_eq!(t.owned_by(owner_hash(3, "a", "b"), 1), vec![5101]);
        assert!(t.owned_by(owner_hash(3, "a", "b"), 100).is_empty());
    }
}
