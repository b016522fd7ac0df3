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

/// A ring alone in its system is what the search finds for each of its bonds.
#[test]
fn a_lone_ring_is_what_the_search_finds() {
    for smiles in [
        "c1ccccc1CC(=O)O",
        "CC(C)(C)c1ccc(cc1)C1(CC1)c1ccccc1",
        "c1ccc2ccccc2c1C1CCNCC1",
        "O=C1CCCN1C1CC1.C1CCC1",
    ] {
        let mol = parse(smiles).unwrap();
        let (lone, bonds) = lone_rings(&mol, &ring_bonds(&mol));
        assert!(lone.iter().any(Option::is_some), "{smiles}");
        for (i, system) in lone.iter().enumerate() {
            let Some(system) = *system else { continue };
            let found = cycles_through(&mol, i);
            assert_eq!(found.len(), 1, "{smiles}: bond {i}");
            assert_eq!(found[0], bonds[system], "{smiles}: bond {i}");
        }
    }
    // A spiro centre joins two rings into one system: not alone, searched.
    let spiro = parse("C1CC12CC2").unwrap();
    let (lone, _) = lone_rings(&spiro, &ring_bonds(&spiro));
    assert!(lone.iter().all(Option::is_none));
}

/// A bond is on a ring exactly when its atoms stay connected without it.
#[test]
fn ring_bonds_are_the_bonds_whose_atoms_stay_connected_without_them() {
    for smiles in [
        "CCO",
        "c1ccccc1CC(=O)O",
        "C1CC2CCC1C2",
        "C1CN2CCC1CC2",
        "c1ccc2[nH]ccc2c1.C1CC1CCC",
        "CC(C)(C)c1ccc(cc1)C1(CC1)c1ccccc1",
        "C12C3C4C1C5C2C3C45",
        "O=C1CCCN1C1CC1",
    ] {
        let mol = parse(smiles).unwrap();
        let on_ring = ring_bonds(&mol);
        for (i, &on) in on_ring.iter().enumerate() {
            assert_eq!(
                on,
                !cycles_through(&mol, i).is_empty(),
                "{smiles}: bond {i}"
            );
        }
    }
}

/// The shortest cycles through bond `i`, searched through every bond.
fn cycles_through(mol: &Molecule, i: usize) -> Vec<Vec<usize>> {
    let every_bond = vec![true; mol.bonds.len()];
    let mut search = Search::new(mol, &every_bond);
    let bond = &mol.bonds[i];
    let mut cycles = Vec::new();
    search.shortest_cycles(bond.a, bond.b, i, &mut |c| cycles.push(c.to_vec()));
    cycles
}
