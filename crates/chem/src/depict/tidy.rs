//! Clearing overlaps after the layout: branches that grew into each other are flipped
//! across, or turned about, the acyclic bond that holds them, whenever that lowers the
//! crowding of the whole drawing; and the measures of a drawing's quality.

use super::geometry::{Point, segments_cross};
use crate::molecule::Molecule;

/// Atoms closer than this (in bond lengths) overlap.
pub const OVERLAP: f64 = 0.5;

/// Above this many atoms the search is skipped: it is quadratic in atoms per try.
const MAX_ATOMS: usize = 150;

/// How many passes over the bonds at most.
const PASSES: usize = 6;

/// Pairs of atoms drawn closer than [`OVERLAP`].
pub fn overlapping_atoms(coords: &[Point]) -> usize {
    let mut count = 0;
    for i in 0..coords.len() {
        for j in i + 1..coords.len() {
            if coords[i].distance(coords[j]) < OVERLAP {
                count += 1;
            }
        }
    }
    count
}

/// Pairs of bonds (with no atom in common) whose lines cross.
pub fn crossing_bonds(mol: &Molecule, coords: &[Point]) -> usize {
    let mut count = 0;
    for (i, x) in mol.bonds.iter().enumerate() {
        for y in &mol.bonds[i + 1..] {
            let shared = x.a == y.a || x.a == y.b || x.b == y.a || x.b == y.b;
            if !shared && segments_cross(coords[x.a], coords[x.b], coords[y.a], coords[y.b]) {
                count += 1;
            }
        }
    }
    count
}

/// Crowding of the drawing: squared shortfalls below 0.8 bond lengths between atoms that
/// are not bonded, and a unit for each pair of crossing bonds.
fn crowding(mol: &Molecule, coords: &[Point]) -> f64 {
    const REACH: f64 = 0.8;
    let mut score = 0.0;
    for i in 0..coords.len() {
        for j in i + 1..coords.len() {
            let d = coords[i].distance(coords[j]);
            if d < REACH && mol.bond_between(i, j).is_none() {
                score += (REACH - d).powi(2) * 10.0;
            }
        }
    }
    score + crossing_bonds(mol, coords) as f64
}

/// Flips and turns branches about acyclic bonds while that lowers the crowding.
pub fn clear_overlaps(mol: &Molecule, coords: &mut [Point]) {
    if mol.atoms.len() > MAX_ATOMS {
        return;
    }
    let in_ring = ring_bonds(mol);
    let mut score = crowding(mol, coords);
    for _ in 0..PASSES {
        if score < 1e-9 {
            return;
        }
        let before = score;
        for (b, bond) in mol.bonds.iter().enumerate() {
            if in_ring[b] {
                continue;
            }
            let side = smaller_side(mol, bond.a, bond.b, b);
            let (pivot, other) = if side.contains(&bond.b) {
                (bond.a, bond.b)
            } else {
                (bond.b, bond.a)
            };
            let moves = [None, Some(0.35), Some(-0.35), Some(0.7), Some(-0.7)];
            for angle in moves {
                let mut trial = coords.to_vec();
                for &x in &side {
                    trial[x] = match angle {
                        None => coords[x].reflected(coords[pivot], coords[other]),
                        Some(t) => coords[pivot] + (coords[x] - coords[pivot]).rotated(t),
                    };
                }
                let s = crowding(mol, &trial);
                if s < score - 1e-6 {
                    coords.copy_from_slice(&trial);
                    score = s;
                }
            }
        }
        if score >= before - 1e-6 {
            return;
        }
    }
}

/// Which bonds lie in a ring.
fn ring_bonds(mol: &Molecule) -> Vec<bool> {
    let mut in_ring = vec![false; mol.bonds.len()];
    for ring in mol.rings() {
        for &b in &ring.bonds {
            in_ring[b] = true;
        }
    }
    in_ring
}

/// The atoms on the smaller side of acyclic bond `bond` (a-b), the end atom included.
fn smaller_side(mol: &Molecule, a: usize, b: usize, bond: usize) -> Vec<usize> {
    let reach = |from: usize| {
        let mut seen = vec![false; mol.atoms.len()];
        seen[from] = true;
        let mut stack = vec![from];
        let mut out = vec![from];
        while let Some(x) = stack.pop() {
            for &e in &mol.adjacency[x] {
                let y = mol.bonds[e].other(x);
                if e != bond && !seen[y] {
                    seen[y] = true;
                    stack.push(y);
                    out.push(y);
                }
            }
        }
        out
    };
    let (sa, sb) = (reach(a), reach(b));
    if sa.len() < sb.len() { sa } else { sb }
}
