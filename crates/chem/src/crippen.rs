//! Wildman-Crippen logP and molar refractivity (RDKit `Crippen.MolLogP`, `Crippen.MolMR`):
//! every atom, hydrogens included, takes the first atom type of `data/crippen.tsv` whose
//! pattern matches with the atom as its first atom; the molecule's value is the sum of its
//! atoms' contributions (Wildman & Crippen, J. Chem. Inf. Comput. Sci. 39, 868-873, 1999).

use crate::element;
use crate::molecule::{Atom, BondOrder, Molecule};
use crate::smarts::Pattern;
use std::sync::OnceLock;

struct AtomType {
    label: String,
    pattern: Pattern,
    logp: f64,
    mr: f64,
}

fn table() -> &'static [AtomType] {
    static TABLE: OnceLock<Vec<AtomType>> = OnceLock::new();
    TABLE.get_or_init(|| {
        include_str!("../data/crippen.tsv")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                AtomType {
                    label: f[0].to_owned(),
                    pattern: Pattern::parse(f[1]).unwrap_or_else(|e| panic!("crippen.tsv: {e}")),
                    logp: f[2].parse().expect("crippen.tsv logP"),
                    mr: f[3].parse().expect("crippen.tsv MR"),
                }
            })
            .collect()
    })
}

/// A copy of `mol` with every hydrogen as an atom of its own.
pub fn with_explicit_hydrogens(mol: &Molecule) -> Molecule {
    let mut out = mol.clone();
    let hydrogen = element::by_symbol("H").expect("hydrogen is in the table");
    for i in 0..mol.atoms.len() {
        let n = out.atoms[i].hydrogens;
        out.atoms[i].hydrogens = 0;
        for _ in 0..n {
            let h = out.add_atom(Atom {
                element: hydrogen,
                isotope: None,
                charge: 0,
                aromatic: false,
                bracket: true,
                hydrogens: 0,
                position: mol.atoms[i].position,
            });
            out.add_bond(i, h, BondOrder::Single);
        }
    }
    out
}

/// The atom type of every atom of [`with_explicit_hydrogens`]`(mol)` (`None`: untyped), for
/// diagnostics and comparison with other implementations.
pub fn atom_types(mol: &Molecule) -> Vec<Option<&'static str>> {
    let full = with_explicit_hydrogens(mol);
    (0..full.atoms.len())
        .map(|i| {
            table()
                .iter()
                .find(|t| t.pattern.matches_at(&full, i))
                .map(|t| t.label.as_str())
        })
        .collect()
}

/// (logP, MR).
pub fn logp_mr(mol: &Molecule) -> (f64, f64) {
    let full = with_explicit_hydrogens(mol);
    let types = table();
    let (mut logp, mut mr) = (0.0, 0.0);
    for i in 0..full.atoms.len() {
        if let Some(t) = types.iter().find(|t| t.pattern.matches_at(&full, i)) {
            logp += t.logp;
            mr += t.mr;
        }
    }
    (logp, mr)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_type_parses_and_known_values_hold() {
        assert!(super::table().len() > 100);
        let (logp, mr) = super::logp_mr(&crate::smiles::parse("CC(=O)Oc1ccccc1C(=O)O").unwrap());
        assert!((logp - 1.3101).abs() < 0.001, "aspirin logP {logp}");
        assert!((mr - 44.71).abs() < 0.01, "aspirin MR {mr}");
    }
}
