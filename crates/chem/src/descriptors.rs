//! Descriptors defined by counting and summing, each matching the RDKit function named in
//! `../shared/testdata/README.md`.

use crate::element::{ELECTRON_MASS, by_symbol, isotope_mass};
use crate::molecule::{BondOrder, Molecule};

use std::collections::BTreeMap;

fn hydrogen_mass(average: bool) -> f64 {
    let h = by_symbol("H").expect("hydrogen is in the table");
    if average {
        h.average_mass
    } else {
        h.monoisotopic_mass
    }
}

/// Formula as RDKit's `CalcMolFormula` writes it: `C`, `H`, then the other elements
/// alphabetically, and the net charge appended (`+`, `-`, `+2`).
pub fn formula(mol: &Molecule) -> String {
    let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
    for a in &mol.atoms {
        *counts.entry(a.element.symbol).or_default() += 1;
        if a.hydrogens > 0 {
            *counts.entry("H").or_default() += u32::from(a.hydrogens);
        }
    }
    let mut out = String::new();
    let mut put = |sym: &str, n: u32| {
        out.push_str(sym);
        if n > 1 {
            out.push_str(&n.to_string());
        }
    };
    // Carbon first, then hydrogen, then the rest alphabetically; without carbon RDKit still
    // writes hydrogen first (`H2FO3P`).
    for first in ["C", "H"] {
        if let Some(&n) = counts.get(first) {
            put(first, n);
        }
    }
    for (sym, &n) in &counts {
        if *sym != "C" && *sym != "H" {
            put(sym, n);
        }
    }
    match mol.total_charge() {
        0 => {}
        1 => out.push('+'),
        -1 => out.push('-'),
        c if c > 0 => out.push_str(&format!("+{c}")),
        c => out.push_str(&format!("-{}", -c)),
    }
    out
}

fn mass(mol: &Molecule, average: bool) -> f64 {
    mol.atoms
        .iter()
        .map(|a| {
            let atom = match a.isotope {
                Some(n) => isotope_mass(a.element.number, n),
                None if average => a.element.average_mass,
                None => a.element.monoisotopic_mass,
            };
            atom + f64::from(a.hydrogens) * hydrogen_mass(average)
        })
        .sum()
}

/// Average molecular weight (RDKit `Descriptors.MolWt`).
pub fn mol_weight(mol: &Molecule) -> f64 {
    mass(mol, true)
}

/// Monoisotopic mass, less one electron per positive charge (RDKit `Descriptors.ExactMolWt`).
pub fn exact_mass(mol: &Molecule) -> f64 {
    mass(mol, false) - f64::from(mol.total_charge()) * ELECTRON_MASS
}

/// Atoms other than hydrogen.
pub fn heavy_atoms(mol: &Molecule) -> usize {
    mol.atoms.iter().filter(|a| a.element.number > 1).count()
}

fn is_n_or_o(mol: &Molecule, i: usize) -> bool {
    matches!(mol.atoms[i].element.number, 7 | 8)
}

/// Lipinski donors: hydrogens on N and O (RDKit `CalcNumLipinskiHBD`).
pub fn lipinski_hbd(mol: &Molecule) -> u32 {
    (0..mol.atoms.len())
        .filter(|&i| is_n_or_o(mol, i))
        .map(|i| mol.total_hydrogens(i))
        .sum()
}

/// Lipinski acceptors: N and O atoms (RDKit `CalcNumLipinskiHBA`).
pub fn lipinski_hba(mol: &Molecule) -> usize {
    (0..mol.atoms.len()).filter(|&i| is_n_or_o(mol, i)).count()
}

/// Ring count as RDKit's `CalcNumRings` gives it: the symmetrized SSSR.
pub fn ring_count(mol: &Molecule) -> usize {
    mol.rings().len()
}

/// Rings (symmetrized SSSR) whose bonds are all aromatic (RDKit `CalcNumAromaticRings`).
pub fn aromatic_rings(mol: &Molecule) -> usize {
    mol.rings()
        .iter()
        .filter(|r| {
            r.bonds
                .iter()
                .all(|&b| mol.bonds[b].order == BondOrder::Aromatic)
        })
        .count()
}

/// Fraction of carbons that are sp3 (RDKit `CalcFractionCSP3`): carbons with only single
/// bonds and no aromaticity. 0 for molecules without carbon.
pub fn fraction_csp3(mol: &Molecule) -> f64 {
    let carbons: Vec<usize> = (0..mol.atoms.len())
        .filter(|&i| mol.atoms[i].element.number == 6)
        .collect();
    if carbons.is_empty() {
        return 0.0;
    }
    let sp3 = carbons
        .iter()
        .filter(|&&i| {
            !mol.atoms[i].aromatic && mol.adjacency[i].iter().all(|&b| mol.bonds[b].kekule == 1)
        })
        .count();
    sp3 as f64 / carbons.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smiles::parse;

    #[test]
    fn aspirin() {
        let m = parse("CC(=O)Oc1ccccc1C(=O)O").unwrap();
        assert_eq!(formula(&m), "C9H8O4");
        assert!((mol_weight(&m) - 180.159).abs() < 0.01);
        assert!((exact_mass(&m) - 180.04226).abs() < 0.0001);
        assert_eq!(heavy_atoms(&m), 13);
        assert_eq!((lipinski_hbd(&m), lipinski_hba(&m)), (1, 4));
        assert_eq!((ring_count(&m), aromatic_rings(&m)), (1, 1));
        assert!((fraction_csp3(&m) - 1.0 / 9.0).abs() < 1e-9);
    }

    #[test]
    fn charged_formulas() {
        assert_eq!(formula(&parse("C[NH3+]").unwrap()), "CH6N+");
        assert_eq!(formula(&parse("[O-]C(=O)C").unwrap()), "C2H3O2-");
        assert_eq!(formula(&parse("[Ca+2]").unwrap()), "Ca+2");
        assert_eq!(formula(&parse("O").unwrap()), "H2O");
        assert_eq!(formula(&parse("O=P(O)(O)F").unwrap()), "H2FO3P");
    }
}
