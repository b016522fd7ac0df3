//! Ring perception: the smallest set of smallest rings (SSSR), found as shortest cycles
//! through each ring bond and kept when independent of the smaller ones already chosen (GF(2)
//! elimination); and its symmetrized form, which RDKit's ring counts use: for a cage such as
//! quinuclidine (bicyclo[2.2.2]octane) the SSSR holds two of three equivalent 6-rings, and
//! the symmetrized set adds the third.

use crate::molecule::Molecule;
use std::collections::VecDeque;

/// Rings: bonds − atoms + connected parts.
pub fn ring_count(mol: &Molecule) -> usize {
    let parts = components(mol);
    (mol.bonds.len() + parts).saturating_sub(mol.atoms.len())
}

fn components(mol: &Molecule) -> usize {
    let mut seen = vec![false; mol.atoms.len()];
    let mut count = 0;
    for start in 0..mol.atoms.len() {
        if seen[start] {
            continue;
        }
        count += 1;
        let mut stack = vec![start];
        seen[start] = true;
        while let Some(a) = stack.pop() {
            for n in mol.neighbours(a) {
                if !seen[n] {
                    seen[n] = true;
                    stack.push(n);
                }
            }
        }
    }
    count
}

/// A ring as the bonds it consists of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ring {
    pub bonds: Vec<usize>,
    pub atoms: Vec<usize>,
}

/// Most shortest paths collected per bond; cages have a handful, and the cap bounds the work.
const MAX_PATHS_PER_BOND: usize = 32;

/// Every shortest path of bonds from `from` to `to` not using bond `skip` (up to the cap).
fn shortest_paths(mol: &Molecule, from: usize, to: usize, skip: usize) -> Vec<Vec<usize>> {
    let mut dist = vec![usize::MAX; mol.atoms.len()];
    dist[from] = 0;
    let mut queue = VecDeque::from([from]);
    while let Some(a) = queue.pop_front() {
        if a == to {
            break;
        }
        for &b in &mol.adjacency[a] {
            let n = mol.bonds[b].other(a);
            if b != skip && dist[n] == usize::MAX {
                dist[n] = dist[a] + 1;
                queue.push_back(n);
            }
        }
    }
    if dist[to] == usize::MAX {
        return Vec::new();
    }
    // Walk back from `to`, always to a neighbour one step closer to `from`.
    let mut paths = Vec::new();
    let mut stack: Vec<(usize, Vec<usize>)> = vec![(to, Vec::new())];
    while let Some((atom, path)) = stack.pop() {
        if atom == from {
            paths.push(path);
            if paths.len() >= MAX_PATHS_PER_BOND {
                break;
            }
            continue;
        }
        for &b in &mol.adjacency[atom] {
            let n = mol.bonds[b].other(atom);
            if b != skip && dist[n] != usize::MAX && dist[n] + 1 == dist[atom] {
                let mut next = path.clone();
                next.push(b);
                stack.push((n, next));
            }
        }
    }
    paths
}

/// The SSSR plus every shortest cycle left out of it that is no larger than the SSSR rings
/// it shares a bond with (RDKit's symmetrized SSSR).
pub fn symmetrized_sssr(mol: &Molecule) -> Vec<Ring> {
    let (mut rings, left_out) = sssr_with_candidates(mol);
    let chosen = rings.clone();
    for cand in left_out {
        let bound = chosen
            .iter()
            .filter(|r| r.bonds.iter().any(|b| cand.contains(b)))
            .map(|r| r.bonds.len())
            .max();
        if bound.is_some_and(|max| cand.len() <= max) {
            rings.push(ring_from_bonds(mol, cand));
        }
    }
    rings
}

fn ring_from_bonds(mol: &Molecule, bonds: Vec<usize>) -> Ring {
    let mut atoms: Vec<usize> = bonds
        .iter()
        .flat_map(|&b| [mol.bonds[b].a, mol.bonds[b].b])
        .collect();
    atoms.sort_unstable();
    atoms.dedup();
    Ring { bonds, atoms }
}

/// The smallest set of smallest rings.
pub fn sssr(mol: &Molecule) -> Vec<Ring> {
    sssr_with_candidates(mol).0
}

/// The SSSR, and the shortest cycles that were not chosen for it.
fn sssr_with_candidates(mol: &Molecule) -> (Vec<Ring>, Vec<Vec<usize>>) {
    let wanted = ring_count(mol);
    if wanted == 0 {
        return (Vec::new(), Vec::new());
    }
    let words = mol.bonds.len().div_ceil(64);
    let mut candidates: Vec<Vec<usize>> = Vec::new();
    for (i, bond) in mol.bonds.iter().enumerate() {
        for mut path in shortest_paths(mol, bond.a, bond.b, i) {
            path.push(i);
            path.sort_unstable();
            if !candidates.contains(&path) {
                candidates.push(path);
            }
        }
    }
    candidates.sort_by_key(Vec::len);
    let mut basis: Vec<Vec<u64>> = Vec::new();
    let mut rings = Vec::new();
    let mut left_out = Vec::new();
    for cand in candidates {
        if rings.len() == wanted {
            left_out.push(cand);
            continue;
        }
        let mut v = vec![0u64; words];
        for &b in &cand {
            v[b / 64] |= 1 << (b % 64);
        }
        let mut reduced = v.clone();
        for row in &basis {
            let pivot = leading_bit(row);
            if reduced[pivot / 64] >> (pivot % 64) & 1 == 1 {
                reduced.iter_mut().zip(row).for_each(|(x, y)| *x ^= y);
            }
        }
        if reduced.iter().all(|w| *w == 0) {
            left_out.push(cand);
            continue;
        }
        basis.push(reduced);
        basis.sort_by_key(|r| std::cmp::Reverse(leading_bit(r)));
        rings.push(ring_from_bonds(mol, cand));
    }
    (rings, left_out)
}

fn leading_bit(v: &[u64]) -> usize {
    for (i, w) in v.iter().enumerate().rev() {
        if *w != 0 {
            return i * 64 + 63 - w.leading_zeros() as usize;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smiles::parse;

    fn sizes(s: &str) -> Vec<usize> {
        let mut v: Vec<_> = sssr(&parse(s).unwrap())
            .iter()
            .map(|r| r.atoms.len())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn ring_sets() {
        assert_eq!(sizes("CCO"), Vec::<usize>::new());
        assert_eq!(sizes("c1ccccc1"), vec![6]);
        assert_eq!(sizes("c1ccc2ccccc2c1"), vec![6, 6]);
        assert_eq!(sizes("C1CC2CCC1C2"), vec![5, 5]);
        assert_eq!(sizes("c1ccc2[nH]ccc2c1"), vec![5, 6]);
        assert_eq!(ring_count(&parse("C1CC1.C1CC1").unwrap()), 2);
        let quinuclidine = parse("C1CN2CCC1CC2").unwrap();
        assert_eq!(sssr(&quinuclidine).len(), 2);
        assert_eq!(symmetrized_sssr(&quinuclidine).len(), 3);
        assert_eq!(
            symmetrized_sssr(&parse("C1CC2CCC1C2").unwrap()).len(),
            2,
            "norbornane"
        );
        assert_eq!(symmetrized_sssr(&parse("c1ccc2ccccc2c1").unwrap()).len(), 2);
    }
}
