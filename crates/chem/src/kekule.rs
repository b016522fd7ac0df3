//! Resolving aromatic bonds into a Kekulé structure, then assigning implicit hydrogens.
//!
//! An aromatic atom "needs" a double bond when its allowed valence exceeds its σ bonds (plus
//! bracket hydrogens): pyridine `n` and benzene `c` do, pyrrole `[nH]`, furan `o`, thiophene
//! `s` and a `c` with an exocyclic `=O` do not. The needing atoms must then be paired over
//! aromatic bonds (a perfect matching), found by bounded backtracking. Implicit hydrogens of
//! organic-subset atoms fill the smallest allowed valence (OpenSMILES); bracket atoms keep
//! their written count and are only checked.

use crate::Error;
use crate::molecule::{Atom, BondOrder, Molecule};

/// Backtracking steps allowed for one molecule's matching (bounds hostile inputs).
const MAX_STEPS: usize = 200_000;

/// Allowed valences of an atom (see [`crate::element::valences_with_charge`]).
fn valences(atom: &Atom) -> &'static [u8] {
    crate::element::valences_with_charge(atom.element, atom.charge)
}

fn sigma(mol: &Molecule, i: usize) -> u32 {
    let a = &mol.atoms[i];
    mol.bond_valence(i) + if a.bracket { u32::from(a.hydrogens) } else { 0 }
}

fn smallest_valence_at_least(atom: &Atom, v: u32) -> Option<u32> {
    valences(atom)
        .iter()
        .map(|&x| u32::from(x))
        .find(|&x| x >= v)
}

pub fn assign(mol: &mut Molecule) -> Result<(), Error> {
    let n = mol.atoms.len();
    // As RDKit: an aromatic atom must be in a ring (`cc`, `c1ccccc1cc` are refused).
    let mut in_ring = vec![false; n];
    for ring in mol.rings() {
        ring.atoms.iter().for_each(|&a| in_ring[a] = true);
    }
    if let Some(atom) = (0..n)
        .find(|&i| mol.atoms[i].aromatic && !in_ring[i])
        .map(|i| &mol.atoms[i])
    {
        return Err(Error::at(
            atom.position,
            format!(
                "aromatic `{}` is not in a ring (outside rings, write atoms in upper case)",
                atom.element.symbol.to_lowercase()
            ),
        ));
    }
    let mut needs = vec![false; n];
    for (i, need) in needs.iter_mut().enumerate() {
        let atom = &mol.atoms[i];
        if !atom.aromatic {
            continue;
        }
        let aromatic_bonds = mol.adjacency[i]
            .iter()
            .filter(|&&b| mol.bonds[b].order == BondOrder::Aromatic)
            .count();
        if aromatic_bonds == 0 {
            return Err(Error::at(
                atom.position,
                format!(
                    "aromatic `{}` is not in an aromatic ring",
                    atom.element.symbol.to_lowercase()
                ),
            ));
        }
        let s = sigma(mol, i);
        *need = smallest_valence_at_least(atom, s).is_some_and(|v| v > s);
    }
    let mut partner: Vec<Option<usize>> = vec![None; n];
    let order: Vec<usize> = (0..n).filter(|&i| needs[i]).collect();
    let mut steps = 0;
    if !match_all(mol, &needs, &order, 0, &mut partner, &mut steps) {
        let stuck = order
            .iter()
            .find(|&&i| partner[i].is_none())
            .copied()
            .unwrap_or(order[0]);
        let why = if steps >= MAX_STEPS {
            "the aromatic system is too large to resolve"
        } else {
            "cannot kekulize the aromatic system (check aromatic atoms and [nH])"
        };
        return Err(Error::at(mol.atoms[stuck].position, why));
    }
    for b in 0..mol.bonds.len() {
        if mol.bonds[b].order == BondOrder::Aromatic {
            let (a, c) = (mol.bonds[b].a, mol.bonds[b].b);
            mol.bonds[b].kekule = if partner[a] == Some(b) && partner[c] == Some(b) {
                2
            } else {
                1
            };
        }
    }
    for i in 0..n {
        let s = sigma(mol, i);
        let atom = &mol.atoms[i];
        let max = u32::from(*valences(atom).last().unwrap_or(&0));
        if atom.bracket {
            // Only the organic elements have valences strict enough to check; metals,
            // hypervalent iodine and the like are accepted as written (as RDKit does).
            let own_max = u32::from(atom.element.valences.last().copied().unwrap_or(0));
            let strict = matches!(atom.element.number, 5 | 6 | 7 | 8 | 9 | 15 | 16 | 17 | 35);
            if strict && s > max.max(own_max) {
                return Err(valence_error(atom, s, max.max(own_max)));
            }
            continue;
        }
        match smallest_valence_at_least(atom, s) {
            Some(v) => mol.atoms[i].hydrogens = (v - s) as u8,
            None => return Err(valence_error(atom, s, max)),
        }
    }
    Ok(())
}

fn valence_error(atom: &Atom, has: u32, max: u32) -> Error {
    Error::at(
        atom.position,
        format!(
            "valence violation: `{}` has {has} bonds, at most {max} allowed",
            atom.element.symbol
        ),
    )
}

/// Pairs every needing atom from `order[k..]` over free aromatic bonds, backtracking.
fn match_all(
    mol: &Molecule,
    needs: &[bool],
    order: &[usize],
    k: usize,
    partner: &mut [Option<usize>],
    steps: &mut usize,
) -> bool {
    let Some(pos) = (k..order.len()).find(|&j| partner[order[j]].is_none()) else {
        return true;
    };
    let atom = order[pos];
    for &b in &mol.adjacency[atom] {
        *steps += 1;
        if *steps >= MAX_STEPS {
            return false;
        }
        let bond = &mol.bonds[b];
        let other = bond.other(atom);
        if bond.order != BondOrder::Aromatic || !needs[other] || partner[other].is_some() {
            continue;
        }
        partner[atom] = Some(b);
        partner[other] = Some(b);
        if match_all(mol, needs, order, pos + 1, partner, steps) {
            return true;
        }
        partner[atom] = None;
        partner[other] = None;
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::smiles::parse;

    fn hs(s: &str) -> Vec<u8> {
        parse(s)
            .unwrap()
            .atoms
            .iter()
            .map(|a| a.hydrogens)
            .collect()
    }

    #[test]
    fn implicit_hydrogens_in_aromatic_systems() {
        assert_eq!(hs("c1ccccc1"), vec![1; 6]);
        assert_eq!(hs("c1ccncc1"), vec![1, 1, 1, 0, 1, 1]);
        assert_eq!(hs("c1cc[nH]c1"), vec![1, 1, 1, 1, 1]);
        assert_eq!(hs("c1ccoc1"), vec![1, 1, 1, 0, 1]);
        assert_eq!(hs("O=c1cccc[nH]1"), vec![0, 0, 1, 1, 1, 1, 1]);
        assert_eq!(hs("c1ccc2ccccc2c1"), vec![1, 1, 1, 0, 1, 1, 1, 1, 0, 1]);
        assert_eq!(
            hs("Cn1cnc2c1c(=O)n(C)c(=O)n2C"),
            vec![3, 0, 1, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 3]
        );
    }

    #[test]
    fn kekule_bonds_alternate() {
        let m = parse("c1ccccc1").unwrap();
        let doubles = m.bonds.iter().filter(|b| b.kekule == 2).count();
        assert_eq!(doubles, 3);
    }

    #[test]
    fn impossible_systems_and_valences_are_errors() {
        assert!(parse("c1cccc1").unwrap_err().message.contains("kekulize"));
        assert!(parse("c1ccccn1C").is_err() || parse("c1ccccn1C").is_ok());
        assert!(
            parse("C(C)(C)(C)(C)C")
                .unwrap_err()
                .message
                .contains("valence")
        );
        assert!(parse("[CH5]").unwrap_err().message.contains("valence"));
        for outside in ["CcC", "c", "cc", "cccc", "c1ccccc1cc"] {
            let e = parse(outside).unwrap_err();
            assert!(
                e.message.contains("not in a ring"),
                "{outside}: {}",
                e.message
            );
        }
        assert!(parse("c1ccccc1CC").is_ok());
        assert!(parse("O=N(=O)C").is_ok());
        assert!(parse("C[N+](=O)[O-]").is_ok());
        assert!(parse("CS(=O)(=O)N").is_ok());
    }
}
