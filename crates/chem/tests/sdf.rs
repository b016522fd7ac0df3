//! Every record of the solubility test set's SD file (257 molecules drawn by another toolkit)
//! becomes a SMILES string describing the same molecule as RDKit read from it (the SMILES the
//! training script wrote to test_set.tsv, in the same order): nitro groups drawn pentavalent
//! come out charge-separated, as RDKit makes them.

use chem::{crippen, descriptors, fingerprint, molfile, smiles};

#[test]
fn the_solubility_sdf_reads_as_its_own_smiles() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/solubility/solubility.test.sdf"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let records: Vec<&str> = text
        .split("$$$$")
        .filter(|r| !r.trim().is_empty())
        .collect();
    assert_eq!(records.len(), 257);
    let tsv = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/solubility/test_set.tsv"
    ))
    .unwrap();
    let rdkit: Vec<&str> = tsv
        .lines()
        .skip(1)
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    let mut nitro = 0;
    for (record, expected) in records.into_iter().zip(rdkit) {
        let record = record.trim_start_matches(['\r', '\n']);
        let name = molfile::title(record);
        let written = molfile::to_smiles(record).unwrap_or_else(|e| panic!("{name}: {e}"));
        nitro += usize::from(written.contains("[N+]") && written.contains("[O-]"));
        let a = smiles::parse(&written).unwrap_or_else(|e| panic!("{name}: {written}: {e}"));
        let b = smiles::parse(expected).unwrap();
        assert_eq!(
            descriptors::formula(&a),
            descriptors::formula(&b),
            "{name}: {written} vs {expected}"
        );
        // Sums over atoms in another order: equal to rounding.
        let (pa, pb) = (crippen::logp_mr(&a), crippen::logp_mr(&b));
        assert!(
            (pa.0 - pb.0).abs() < 1e-9 && (pa.1 - pb.1).abs() < 1e-9,
            "{name}: {written} vs {expected}: {pa:?} {pb:?}"
        );
        let morgan = fingerprint::Morgan {
            radius: 2,
            bits: 2048,
        };
        assert_eq!(
            morgan.fingerprint(&a),
            morgan.fingerprint(&b),
            "{name}: {written} vs {expected}"
        );
    }
    assert!(nitro > 0, "the set has nitro compounds drawn pentavalent");
}
