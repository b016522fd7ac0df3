use super::*;

const ETHANOL_V2000: &str = "ethanol
  test

  3  2  0  0  0  0            999 V2000
    0.0000    0.0000    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0
    1.0000    0.0000    0.0000 C   0  0  0  0  0  0  0  0  0  0  0  0
    2.0000    0.0000    0.0000 O   0  0  0  0  0  0  0  0  0  0  0  0
  1  2  1  0
  2  3  1  0
M  END
> <ID>
42

$$$$
";

#[test]
fn v2000_title_data_and_smiles() {
    assert_eq!(to_smiles(ETHANOL_V2000).unwrap(), "CCO");
    assert_eq!(title(ETHANOL_V2000), "ethanol");
    assert_eq!(data_item(ETHANOL_V2000, "ID").as_deref(), Some("42"));
    assert_eq!(data_item(ETHANOL_V2000, "NAME"), None);
}

#[test]
fn charges_isotopes_and_drawn_hydrogens() {
    // Ammonium from M  CHG, with one hydrogen drawn, and a 13C methyl.
    let mol = "ammonium
  test

  3  2  0  0  0  0            999 V2000
    0.0000    0.0000    0.0000 N   0  0
    1.0000    0.0000    0.0000 H   0  0
    2.0000    0.0000    0.0000 C   0  0
  1  2  1  0
  1  3  1  0
M  CHG  1   1   1
M  ISO  1   3  13
M  END
";
    assert_eq!(to_smiles(mol).unwrap(), "[NH3+][13CH3]");
}

#[test]
fn v3000_is_read() {
    let mol = "acetate
  test

  0  0  0     0  0            999 V3000
M  V30 BEGIN CTAB
M  V30 COUNTS 4 3 0 0 0
M  V30 BEGIN ATOM
M  V30 1 C 0 0 0 0
M  V30 2 C 1 0 0 0
M  V30 3 O 2 0 0 0
M  V30 4 O 1 1 0 0 CHG=-1
M  V30 END ATOM
M  V30 BEGIN BOND
M  V30 1 1 1 2
M  V30 2 2 2 3
M  V30 3 1 2 4
M  V30 END BOND
M  V30 END CTAB
M  END
";
    assert_eq!(to_smiles(mol).unwrap(), "CC(=O)[O-]");
}

#[test]
fn queries_and_broken_tables_are_refused_with_reasons() {
    let aromatic = ETHANOL_V2000.replace("  2  3  1  0", "  2  3  4  0");
    assert!(to_smiles(&aromatic).unwrap_err().message.contains("Kekulé"));
    let query = ETHANOL_V2000.replace(" O   0", " Q   0");
    assert!(
        to_smiles(&query)
            .unwrap_err()
            .message
            .contains("pseudo-atom")
    );
    let short = ETHANOL_V2000.replace("  3  2  0", "  9  2  0");
    assert!(
        to_smiles(&short)
            .unwrap_err()
            .message
            .contains("announces 9 atoms")
    );
    let dangling = ETHANOL_V2000.replace("  2  3  1  0", "  2  7  1  0");
    assert!(
        to_smiles(&dangling)
            .unwrap_err()
            .message
            .contains("atom 7 does not exist")
    );
    assert!(to_smiles("just a title").is_err());
    assert!(to_smiles("").is_err());
}
