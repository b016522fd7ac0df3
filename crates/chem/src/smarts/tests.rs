use super::*;
use crate::smiles::parse;

fn hits(smarts: &str, smiles: &str) -> Vec<usize> {
    let p = Pattern::parse(smarts).unwrap();
    let m = parse(smiles).unwrap();
    let facts = AtomFacts::all(&m);
    (0..m.atoms.len())
        .filter(|&i| p.matches_at(&m, &facts, i))
        .collect()
}

#[test]
fn anchored_matching() {
    assert_eq!(hits("[CH3]C", "CCO"), vec![0]);
    assert_eq!(hits("[c](:a)(:a)-O", "Oc1ccccc1"), vec![1]);
    assert_eq!(hits("[NH3,NH2,NH;+,+2,+3]", "C[NH3+]"), vec![1]);
    assert_eq!(hits("[O]=C([C,c])[a;!#1]", "O=C(C)c1ccccc1"), vec![0]);
    assert_eq!(hits("[#9-0]", "FC"), vec![0]);
    assert_eq!(hits("[OX1;-,-2,-3][#7]", "C[N+](=O)[O-]"), vec![3]);
    assert!(Pattern::parse("[C").is_err());
}

#[test]
fn a_first_atom_is_settled_by_its_requirements_only_when_they_say_everything() {
    let complete = |smarts: &str| {
        Pattern::parse(smarts)
            .unwrap()
            .first_atom_requires()
            .complete
    };
    assert!(complete("[CH3]C"));
    assert!(complete("[c;H1;X3]"));
    assert!(complete("[#7+]"));
    assert!(complete("[*]"));
    // An alternative, a negation, or one field said twice with two values.
    assert!(!complete("[N,O]C"));
    assert!(!complete("[C;!H0]"));
    assert!(!complete("[CH1;H2]"));
}
