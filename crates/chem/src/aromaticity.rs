//! Aromaticity perception in RDKit's model, so that Kekulé and aromatic SMILES of the same
//! molecule give the same descriptors.
//!
//! Each ring atom donates π electrons according to its Kekulé environment: an atom with a
//! double bond inside a ring gives 1; one whose double bond leaves the rings towards a more
//! electronegative atom (C=O, C=N, C=S) gives 0; one with a lone pair and no double bond
//! (pyrrole N-H, furan O, thiophene S, carbanion) gives 2; a cation without a double bond
//! (tropylium) gives 0; anything else (sp3, more than three neighbours, two double bonds)
//! cannot be aromatic. A ring is aromatic when all its atoms can be and their electrons number
//! 4n+2 (Hückel); where single rings fail, fused combinations of rings of one ring system are
//! tried the same way (azulene).

use crate::molecule::{BondOrder, Molecule};
use crate::rings;

/// Fused combinations are tried for ring systems of at most this many rings (2^n subsets).
const MAX_RINGS_FOR_FUSED_SEARCH: usize = 10;

/// π electrons an atom can donate: `None` when it cannot take part.
fn donation(mol: &Molecule, i: usize, bond_in_ring: &[bool], atom_in_ring: &[bool]) -> Option<u32> {
    let atom = &mol.atoms[i];
    if !atom_in_ring[i] {
        return None;
    }
    let (outer, default_valence): (i32, i32) = match atom.element.number {
        5 => (3, 3),
        6 => (4, 4),
        7 => (5, 3),
        8 => (6, 2),
        15 => (5, 3),
        16 => (6, 2),
        33 => (5, 3),
        34 => (6, 2),
        52 => (6, 2),
        _ => return None,
    };
    let degree = mol.adjacency[i].len() as i32 + i32::from(atom.hydrogens);
    if degree > 3 {
        return None;
    }
    let multiple: Vec<usize> = mol.adjacency[i]
        .iter()
        .copied()
        .filter(|&b| mol.bonds[b].kekule >= 2)
        .collect();
    if multiple.len() > 1 {
        return None;
    }
    let lone = (outer - default_valence - i32::from(atom.charge)).max(0);
    let mut electrons = (default_valence - degree) + lone;
    let unsaturation = multiple
        .iter()
        .map(|&b| i32::from(mol.bonds[b].kekule) - 1)
        .sum::<i32>();
    if electrons > 1 && unsaturation > 1 {
        electrons = 1;
    }
    let exocyclic = multiple.iter().copied().find(|&b| !bond_in_ring[b]);
    let cyclic = multiple.iter().any(|&b| bond_in_ring[b]);
    match electrons {
        e if e < 0 => None,
        0 => {
            if exocyclic.is_some() {
                Some(0)
            } else if cyclic {
                Some(1)
            } else {
                None
            }
        }
        1 => {
            if let Some(b) = exocyclic {
                let other = &mol.atoms[mol.bonds[b].other(i)];
                if electronegativity(other.element.number) > electronegativity(atom.element.number)
                {
                    Some(0)
                } else {
                    Some(1)
                }
            } else if cyclic {
                Some(1)
            } else if atom.charge == 1 {
                Some(0)
            } else {
                None
            }
        }
        _ => {
            if exocyclic.is_some() || cyclic {
                Some(1)
            } else {
                Some(2)
            }
        }
    }
}

/// Pauling electronegativities of the elements that matter here (others rank lowest).
fn electronegativity(z: u8) -> f64 {
    match z {
        1 => 2.20,
        5 => 2.04,
        6 => 2.55,
        7 => 3.04,
        8 => 3.44,
        9 => 3.98,
        14 => 1.90,
        15 => 2.19,
        16 => 2.58,
        17 => 3.16,
        33 => 2.18,
        34 => 2.55,
        35 => 2.96,
        53 => 2.66,
        _ => 1.0,
    }
}

fn huckel(electrons: u32) -> bool {
    electrons >= 2 && (electrons - 2).is_multiple_of(4)
}

/// Re-derives every aromatic flag from the Kekulé structure.
pub fn perceive(mol: &mut Molecule) {
    let ring_set = mol.rings();
    let mut bond_in_ring = vec![false; mol.bonds.len()];
    let mut atom_in_ring = vec![false; mol.atoms.len()];
    for r in ring_set {
        r.bonds.iter().for_each(|&b| bond_in_ring[b] = true);
        r.atoms.iter().for_each(|&a| atom_in_ring[a] = true);
    }
    let donate: Vec<Option<u32>> = (0..mol.atoms.len())
        .map(|i| donation(mol, i, &bond_in_ring, &atom_in_ring))
        .collect();
    let usable: Vec<usize> = (0..ring_set.len())
        .filter(|&r| ring_set[r].atoms.iter().all(|&a| donate[a].is_some()))
        .collect();
    let electrons = |atoms: &[usize]| atoms.iter().map(|&a| donate[a].unwrap_or(0)).sum::<u32>();
    let mut aromatic_ring = vec![false; ring_set.len()];
    for &r in &usable {
        aromatic_ring[r] = huckel(electrons(&ring_set[r].atoms));
    }
    // Fused combinations within each system of usable rings sharing bonds, smallest first,
    // until every atom of the system is aromatic. A combination that passes makes its atoms
    // aromatic and its peripheral bonds, but not the bonds fused inside it (RDKit writes
    // azulene as c1ccc2cccc-2cc1), so its rings do not count as aromatic rings by themselves.
    let mut aromatic_atom = vec![false; mol.atoms.len()];
    let mut aromatic_bond = vec![false; mol.bonds.len()];
    for (r, ring) in ring_set.iter().enumerate() {
        if aromatic_ring[r] {
            ring.atoms.iter().for_each(|&a| aromatic_atom[a] = true);
            ring.bonds.iter().for_each(|&b| aromatic_bond[b] = true);
        }
    }
    for system in fused_systems(ring_set, &usable) {
        if system.len() < 2 || system.len() > MAX_RINGS_FOR_FUSED_SEARCH {
            continue;
        }
        let system_atoms: Vec<usize> = system
            .iter()
            .flat_map(|&r| ring_set[r].atoms.iter().copied())
            .collect();
        for size in 2..=system.len() {
            if system_atoms.iter().all(|&a| aromatic_atom[a]) {
                break;
            }
            for mask in 1u32..(1 << system.len()) {
                if mask.count_ones() as usize != size {
                    continue;
                }
                let members: Vec<usize> = (0..system.len())
                    .filter(|k| mask >> k & 1 == 1)
                    .map(|k| system[k])
                    .collect();
                if !connected(ring_set, &members) {
                    continue;
                }
                let mut atoms: Vec<usize> = members
                    .iter()
                    .flat_map(|&r| ring_set[r].atoms.iter().copied())
                    .collect();
                atoms.sort_unstable();
                atoms.dedup();
                if !huckel(electrons(&atoms)) {
                    continue;
                }
                atoms.iter().for_each(|&a| aromatic_atom[a] = true);
                for &r in &members {
                    for &b in &ring_set[r].bonds {
                        let shared = members
                            .iter()
                            .filter(|&&o| ring_set[o].bonds.contains(&b))
                            .count();
                        if shared == 1 {
                            aromatic_bond[b] = true;
                        }
                    }
                }
            }
        }
    }
    for (i, a) in mol.atoms.iter_mut().enumerate() {
        a.aromatic = aromatic_atom[i];
    }
    for (i, b) in mol.bonds.iter_mut().enumerate() {
        b.order = if aromatic_bond[i] {
            BondOrder::Aromatic
        } else {
            match b.kekule {
                1 => BondOrder::Single,
                2 => BondOrder::Double,
                3 => BondOrder::Triple,
                _ => BondOrder::Quadruple,
            }
        };
    }
}

/// Groups rings (indices into `rings`) that share bonds, transitively.
fn fused_systems(rings: &[rings::Ring], usable: &[usize]) -> Vec<Vec<usize>> {
    let mut systems: Vec<Vec<usize>> = Vec::new();
    for &r in usable {
        let touching: Vec<usize> = systems
            .iter()
            .enumerate()
            .filter(|(_, s)| s.iter().any(|&o| shares_bond(&rings[o], &rings[r])))
            .map(|(k, _)| k)
            .collect();
        let mut merged = vec![r];
        for k in touching.into_iter().rev() {
            merged.extend(systems.remove(k));
        }
        systems.push(merged);
    }
    systems
}

fn shares_bond(a: &rings::Ring, b: &rings::Ring) -> bool {
    a.bonds.iter().any(|x| b.bonds.contains(x))
}

fn connected(rings: &[rings::Ring], members: &[usize]) -> bool {
    let mut reached = vec![members[0]];
    let mut changed = true;
    while changed {
        changed = false;
        for &m in members {
            if !reached.contains(&m) && reached.iter().any(|&r| shares_bond(&rings[r], &rings[m])) {
                reached.push(m);
                changed = true;
            }
        }
    }
    reached.len() == members.len()
}

#[cfg(test)]
mod tests {
    use crate::descriptors::aromatic_rings;
    use crate::smiles::parse;

    fn ar(s: &str) -> usize {
        aromatic_rings(&parse(s).unwrap())
    }

    #[test]
    fn kekule_and_aromatic_forms_agree() {
        assert_eq!(ar("C1=CC=CC=C1"), 1);
        assert_eq!(ar("c1ccccc1"), 1);
        assert_eq!(ar("C1=CC2=CC=CC=C2C=C1"), 2, "naphthalene");
        assert_eq!(ar("C1=CNC=C1"), 1, "pyrrole");
        assert_eq!(ar("O=C1C=CC=CN1"), 1, "2-pyridone");
        // Azulene is aromatic as a whole, but RDKit leaves its fusion bond single, so
        // neither ring counts as an aromatic ring.
        assert_eq!(ar("C1=CC=C2C=CC=C2C=C1"), 0, "azulene");
        assert!(
            parse("C1=CC=C2C=CC=C2C=C1")
                .unwrap()
                .atoms
                .iter()
                .all(|a| a.aromatic)
        );
        assert_eq!(ar("O=C1C2=CC=CC=C2C(=O)C2=CC=CC=C12"), 2, "anthraquinone");
        assert_eq!(ar("C1=CCC=C1"), 0, "cyclopentadiene");
        assert_eq!(ar("C1=CC=CC=CC=C1"), 0, "cyclooctatetraene");
        assert_eq!(ar("C=C1C=CC=C1"), 0, "fulvene");
    }
}
