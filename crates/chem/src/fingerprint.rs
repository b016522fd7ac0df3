//! Circular (Morgan / ECFP-style) fingerprints folded to a bit vector, and the Tanimoto
//! similarity between two of them.
//!
//! The algorithm is Morgan's as Rogers and Hahn describe extended-connectivity fingerprints
//! (J. Chem. Inf. Model. 2010, 50, 742-754): every heavy atom starts from an identifier hashed
//! from its own invariants (element, heavy degree, attached hydrogens, charge, isotope, ring
//! membership); each iteration rehashes an atom's identifier with its neighbours' (sorted, with
//! the bond order), so after `r` iterations an identifier describes the circular environment of
//! radius `r`. Every identifier of every radius sets bit `id % bits`.
//!
//! The identifiers are our own hash, not RDKit's, so the bits differ from RDKit's
//! `GetMorganFingerprintAsBitVect`; what matters is that the same code featurizes a molecule
//! when a model is trained (the `featurize` CLI) and when it is served (the component).

use crate::molecule::{BondOrder, Molecule};

/// Settings of a folded Morgan fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Morgan {
    /// Iterations: 2 gives ECFP4-like environments (diameter 4).
    pub radius: u32,
    /// Length of the folded bit vector.
    pub bits: usize,
}

/// A folded fingerprint: `bits` bits packed into 64-bit words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    words: Vec<u64>,
    bits: usize,
}

impl Fingerprint {
    pub fn zeros(bits: usize) -> Self {
        Self {
            words: vec![0; bits.div_ceil(64)],
            bits,
        }
    }

    /// The fingerprint with exactly the given bits set (indices at or past `bits` are ignored).
    pub fn from_on_bits(bits: usize, on: impl IntoIterator<Item = usize>) -> Self {
        let mut fp = Self::zeros(bits);
        for i in on {
            if i < bits {
                fp.set(i);
            }
        }
        fp
    }

    /// A fingerprint from packed bytes: bit `i` in byte `i / 8` at position `i % 8` (numpy's
    /// `packbits(..., bitorder="little")`). `None` unless there are exactly `bits / 8` bytes.
    pub fn from_packed(bits: usize, bytes: &[u8]) -> Option<Self> {
        if !bits.is_multiple_of(8) || bytes.len() != bits / 8 {
            return None;
        }
        let words = bytes
            .chunks(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect();
        Some(Self { words, bits })
    }

    pub fn len(&self) -> usize {
        self.bits
    }

    pub fn is_empty(&self) -> bool {
        self.bits == 0
    }

    pub fn set(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
    }

    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }

    pub fn count_ones(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }

    /// Indices of the set bits, ascending.
    pub fn on_bits(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.bits).filter(|&i| self.get(i))
    }

    /// Tanimoto (Jaccard) similarity: shared bits over bits set in either; 1 for two empty
    /// fingerprints, which are identical. Lengths must match.
    pub fn tanimoto(&self, other: &Fingerprint) -> f64 {
        debug_assert_eq!(self.bits, other.bits);
        let (mut both, mut either) = (0u32, 0u32);
        for (a, b) in self.words.iter().zip(&other.words) {
            both += (a & b).count_ones();
            either += (a | b).count_ones();
        }
        if either == 0 {
            1.0
        } else {
            f64::from(both) / f64::from(either)
        }
    }
}

/// SplitMix64's finalizer: a cheap, well-mixed, stable 64-bit hash step.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn combine(seed: u64, value: u64) -> u64 {
    mix(seed ^ value.wrapping_add(0x9e37_79b9_7f4a_7c15))
}

fn bond_code(order: BondOrder) -> u64 {
    match order {
        BondOrder::Single => 1,
        BondOrder::Double => 2,
        BondOrder::Triple => 3,
        BondOrder::Quadruple => 4,
        BondOrder::Aromatic => 5,
    }
}

impl Morgan {
    /// The folded fingerprint of `mol`. Hydrogen atoms written as atoms (`[H]`) count as
    /// attached hydrogens of their neighbour, not as atoms of their own.
    pub fn fingerprint(&self, mol: &Molecule) -> Fingerprint {
        let mut fp = Fingerprint::zeros(self.bits);
        if self.bits == 0 {
            return fp;
        }
        let heavy: Vec<usize> = (0..mol.atoms.len())
            .filter(|&i| mol.atoms[i].element.number != 1)
            .collect();
        let mut in_ring = vec![false; mol.atoms.len()];
        for ring in mol.rings() {
            for &a in &ring.atoms {
                in_ring[a] = true;
            }
        }
        let mut ids = vec![0u64; mol.atoms.len()];
        for &i in &heavy {
            let atom = &mol.atoms[i];
            let degree = mol
                .neighbours(i)
                .filter(|&n| mol.atoms[n].element.number != 1)
                .count();
            let invariants = [
                u64::from(atom.element.number),
                degree as u64,
                u64::from(mol.total_hydrogens(i)),
                atom.charge as i64 as u64,
                u64::from(atom.isotope.unwrap_or(0)),
                u64::from(in_ring[i]),
            ];
            ids[i] = invariants.iter().fold(0, |h, &v| combine(h, v));
            fp.set((ids[i] % self.bits as u64) as usize);
        }
        let mut neighbourhood: Vec<(u64, u64)> = Vec::new();
        for layer in 1..=u64::from(self.radius) {
            let previous = ids.clone();
            for &i in &heavy {
                neighbourhood.clear();
                neighbourhood.extend(mol.adjacency[i].iter().filter_map(|&b| {
                    let n = mol.bonds[b].other(i);
                    (mol.atoms[n].element.number != 1)
                        .then(|| (bond_code(mol.bonds[b].order), previous[n]))
                }));
                neighbourhood.sort_unstable();
                let mut h = combine(layer, previous[i]);
                for &(bond, id) in &neighbourhood {
                    h = combine(combine(h, bond), id);
                }
                ids[i] = h;
                fp.set((h % self.bits as u64) as usize);
            }
        }
        fp
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smiles::parse;

    fn fp(smiles: &str) -> Fingerprint {
        Morgan {
            radius: 2,
            bits: 2048,
        }
        .fingerprint(&parse(smiles).unwrap())
    }

    #[test]
    fn both_smiles_forms_and_atom_orders_agree() {
        assert_eq!(fp("c1ccccc1O"), fp("OC1=CC=CC=C1"));
        assert_eq!(fp("CC(=O)Oc1ccccc1C(=O)O"), fp("OC(=O)c1ccccc1OC(C)=O"));
    }

    #[test]
    fn similarity_orders_molecules_sensibly() {
        let ethanol = fp("CCO");
        assert_eq!(ethanol.tanimoto(&ethanol), 1.0);
        let propanol = fp("CCCO");
        let benzene = fp("c1ccccc1");
        assert!(ethanol.tanimoto(&propanol) > ethanol.tanimoto(&benzene));
        assert_eq!(ethanol.tanimoto(&benzene), 0.0);
    }

    #[test]
    fn radius_zero_sets_one_bit_per_atom_kind() {
        let m = Morgan {
            radius: 0,
            bits: 4096,
        };
        // Methyl, methylene and hydroxyl oxygen: three distinct environments.
        assert_eq!(m.fingerprint(&parse("CCO").unwrap()).count_ones(), 3);
        // Radius 1 adds one more environment per atom.
        let m1 = Morgan {
            radius: 1,
            bits: 4096,
        };
        assert_eq!(m1.fingerprint(&parse("CCO").unwrap()).count_ones(), 6);
    }

    #[test]
    fn explicit_hydrogen_atoms_are_hydrogen_counts() {
        assert_eq!(fp("[H]OC([H])([H])[H]"), fp("CO"));
    }

    #[test]
    fn packed_bytes_are_little_endian_bits() {
        let fp = Fingerprint::from_packed(16, &[0b0000_0101, 0b1000_0000]).unwrap();
        assert_eq!(fp.on_bits().collect::<Vec<_>>(), vec![0, 2, 15]);
        assert!(Fingerprint::from_packed(16, &[0]).is_none());
    }

    #[test]
    fn on_bits_round_trip() {
        let a = fp("CC(=O)Nc1ccc(O)cc1");
        let b = Fingerprint::from_on_bits(2048, a.on_bits());
        assert_eq!(a, b);
    }
}
