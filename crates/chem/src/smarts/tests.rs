use super::*;
use crate::smiles::parse;

fn hits(smarts: &str, smiles: &str) -> Vec<usize> {
    let p = Pattern::parse(smarts).unwrap();
    let m = parse(smiles).unwrap();
    (0..m.atoms.len())
        .filter(|&i| p.matches_at(&m, i))
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
