//! Wildman-Crippen logP and molar refractivity (RDKit `Crippen.MolLogP`, `Crippen.MolMR`):
//! every atom, hydrogens included, takes the first atom type of `data/crippen.tsv` whose
//! pattern matches with the atom as its first atom; the molecule's value is the sum of its
//! atoms' contributions (Wildman & Crippen, J. Chem. Inf. Comput. Sci. 39, 868-873, 1999).

use crate::element;
use crate::molecule::{Atom, BondOrder, Molecule};
use crate::smarts::{AtomFacts, Pattern, Requires};

// Generated; left as the generator writes it.
#[rustfmt::skip]
#[path = "crippen_table.rs"]
mod generated;

/// One Wildman-Crippen atom type.
pub(crate) struct AtomType {
    pub label: &'static str,
    pub pattern: Pattern,
    pub logp: f64,
    pub mr: f64,
}

/// The atom types of `data/crippen.tsv`, in order, compiled in (`crippen_table.rs` is
/// generated from the file by a test; see `the_compiled_table_is_the_data_file`).
fn table() -> &'static [AtomType] {
    generated::TABLE
}

/// A copy of `mol` with every hydrogen as an atom of its own.
pub fn with_explicit_hydrogens(mol: &Molecule) -> Molecule {
    let mut out = mol.clone_graph();
    let hydrogens: usize = mol.atoms.iter().map(|a| usize::from(a.hydrogens)).sum();
    out.atoms.reserve(hydrogens);
    out.bonds.reserve(hydrogens);
    out.adjacency.reserve(hydrogens);
    let hydrogen = element::by_symbol("H").expect("hydrogen is in the table");
    for i in 0..mol.atoms.len() {
        out.adjacency[i].reserve(usize::from(mol.atoms[i].hydrogens));
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
    let facts = AtomFacts::all(&full);
    (0..full.atoms.len())
        .map(|i| first_type(&full, &facts, i).map(|t| t.label))
        .collect()
}

/// (logP, MR).
pub fn logp_mr(mol: &Molecule) -> (f64, f64) {
    let full = with_explicit_hydrogens(mol);
    let facts = AtomFacts::all(&full);
    let (mut logp, mut mr) = (0.0, 0.0);
    for i in 0..full.atoms.len() {
        if let Some(t) = first_type(&full, &facts, i) {
            logp += t.logp;
            mr += t.mr;
        }
    }
    (logp, mr)
}

/// The first type of the table matching atom `i`, trying only the types whose pattern can
/// start at the atom's element (in table order, so the answer is the table's). Profiled,
/// matching every pattern against every atom, hydrogens included, was molprop's largest
/// cost per request. Each element's list is made when an atom of it is first typed: a
/// host that starts a fresh instance per request (Spin) pays for the few elements a
/// molecule has, not for all of them (building them all halved such a host's throughput).
///
/// Each candidate carries what its first atom requires (hydrogens, connections, aromaticity,
/// charge), checked against the atom's facts, computed once, before the pattern is tried;
/// where that is all the first atom requires, only its neighbours are matched.
fn first_type(mol: &Molecule, facts: &[AtomFacts], i: usize) -> Option<&'static AtomType> {
    const ELEMENTS: usize = 256;
    /// An element's candidate types: index into the table, and what its first atom requires.
    type Candidates = Box<[(u16, Requires)]>;
    static BY_ELEMENT: [std::sync::OnceLock<Candidates>; ELEMENTS] =
        [const { std::sync::OnceLock::new() }; ELEMENTS];
    let z = mol.atoms[i].element.number;
    let candidates = BY_ELEMENT[usize::from(z)].get_or_init(|| {
        (0..table().len())
            .filter(|&t| table()[t].pattern.may_start_at_element(z))
            .map(|t| (t as u16, table()[t].pattern.first_atom_requires()))
            .collect()
    });
    let facts_i = &facts[i];
    candidates
        .iter()
        .filter(|(_, requires)| requires.allows(facts_i))
        .map(|&(t, requires)| (&table()[usize::from(t)], requires.complete))
        .find(|&(t, first_matches)| match first_matches {
            true => t.pattern.matches_around(mol, facts, i),
            false => t.pattern.matches_at(mol, facts, i),
        })
        .map(|(t, _)| t)
}

#[cfg(test)]
mod tests {
    use super::AtomType;
    use crate::smarts::{Expr, Pattern};

    #[test]
    fn the_element_index_finds_what_the_whole_table_finds() {
        let text = include_str!("../tests/data/rdkit-samples.tsv");
        for line in text.lines().skip(1).take(400) {
            let smiles = line.split('\t').next().unwrap();
            let Ok(mol) = crate::smiles::parse(smiles) else {
                continue;
            };
            let full = super::with_explicit_hydrogens(&mol);
            let facts = super::AtomFacts::all(&full);
            for i in 0..full.atoms.len() {
                let whole = super::table()
                    .iter()
                    .find(|t| t.pattern.matches_at(&full, &facts, i));
                let indexed = super::first_type(&full, &facts, i);
                assert_eq!(
                    whole.map(|t| t.label),
                    indexed.map(|t| t.label),
                    "{smiles} atom {i}"
                );
            }
        }
    }

    #[test]
    fn every_type_parses_and_known_values_hold() {
        assert!(super::table().len() > 100);
        let (logp, mr) = super::logp_mr(&crate::smiles::parse("CC(=O)Oc1ccccc1C(=O)O").unwrap());
        assert!((logp - 1.3101).abs() < 0.001, "aspirin logP {logp}");
        assert!((mr - 44.71).abs() < 0.01, "aspirin MR {mr}");
    }

    /// The types of `data/crippen.tsv`, parsed.
    fn from_data_file() -> Vec<AtomType> {
        include_str!("../data/crippen.tsv")
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                AtomType {
                    label: String::leak(f[0].to_owned()),
                    pattern: Pattern::parse(f[1]).unwrap_or_else(|e| panic!("crippen.tsv: {e}")),
                    logp: f[2].parse().expect("crippen.tsv logP"),
                    mr: f[3].parse().expect("crippen.tsv MR"),
                }
            })
            .collect()
    }

    fn expr_source(e: &Expr) -> String {
        let list = |xs: &[Expr]| xs.iter().map(expr_source).collect::<Vec<_>>().join(", ");
        match e {
            Expr::Prim(p) => format!("Expr::Prim(Prim::{p:?})"),
            Expr::Not(x) => format!("Expr::Not(&{})", expr_source(x)),
            Expr::And(xs) => format!("Expr::And(&[{}])", list(xs)),
            Expr::Or(xs) => format!("Expr::Or(&[{}])", list(xs)),
        }
    }

    /// Rust source of the table, as `crippen_table.rs` holds it.
    fn table_source(types: &[AtomType]) -> String {
        let mut out = String::from(
            "//! Generated from `data/crippen.tsv` by the test `the_compiled_table_is_the_data_file`\n\
             //! (`UPDATE_GENERATED=1 cargo test -p chem` rewrites it). Do not edit.\n\
             //! Over 400 lines: one entry per atom type of the table, generated.\n\n\
             use super::AtomType;\n\
             use crate::smarts::{BondExpr, Expr, Pattern, Prim};\n\n\
             pub(super) static TABLE: &[AtomType] = &[\n",
        );
        for t in types {
            let atoms: Vec<String> = t.pattern.atoms.iter().map(expr_source).collect();
            let parents: Vec<String> = t
                .pattern
                .parents
                .iter()
                .map(|(p, b)| {
                    let p = if *p == usize::MAX {
                        "usize::MAX".to_owned()
                    } else {
                        p.to_string()
                    };
                    format!("({p}, BondExpr::{b:?})")
                })
                .collect();
            out.push_str(&format!(
                "    AtomType {{\n        label: {:?},\n        logp: {:?},\n        mr: {:?},\n        pattern: Pattern {{\n            atoms: &[{}],\n            parents: &[{}],\n        }},\n    }},\n",
                t.label,
                t.logp,
                t.mr,
                atoms.join(", "),
                parents.join(", ")
            ));
        }
        out.push_str("];\n");
        out
    }

    #[test]
    fn the_compiled_table_is_the_data_file() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/crippen_table.rs");
        let want = table_source(&from_data_file());
        if std::env::var_os("UPDATE_GENERATED").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        // Compared without whitespace, so rustfmt's layout of the file does not matter.
        let squeeze = |s: &str| s.split_whitespace().collect::<String>();
        assert!(
            squeeze(&have) == squeeze(&want),
            "src/crippen_table.rs is out of date with data/crippen.tsv; \
             run `UPDATE_GENERATED=1 cargo test -p chem` and commit the result"
        );
        assert_eq!(super::table().len(), from_data_file().len());
    }
}
