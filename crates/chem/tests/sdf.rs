//! Every record of the solubility test set's SD file (257 molecules drawn by another toolkit)
//! becomes a SMILES string describing the same molecule as the SMILES its record carries.

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
    for record in records {
        let record = record.trim_start_matches(['\r', '\n']);
        let name = molfile::title(record);
        let written = molfile::to_smiles(record).unwrap_or_else(|e| panic!("{name}: {e}"));
        let expected = molfile::data_item(record, "SMILES").unwrap();
        let a = smiles::parse(&written).unwrap_or_else(|e| panic!("{name}: {written}: {e}"));
        let b = smiles::parse(&expected).unwrap();
        assert_eq!(
            descriptors::formula(&a),
            descriptors::formula(&b),
            "{name}: {written} vs {expected}"
        );
        assert_eq!(
            crippen::logp_mr(&a),
            crippen::logp_mr(&b),
            "{name}: {written} vs {expected}"
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
}
