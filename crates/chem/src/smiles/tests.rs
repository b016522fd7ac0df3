use super::*;

fn err(s: &str) -> String {
    parse(s).unwrap_err().message
}

#[test]
fn room_made_up_front_is_bounded_whatever_the_length() {
    let long = format!("[{}]", "C".repeat(1 << 20));
    let parser = Parser::new(&long);
    assert_eq!(parser.mol.atoms.capacity(), PRESIZED_ATOMS);
    assert_eq!(parser.mol.bonds.capacity(), PRESIZED_ATOMS);
    assert!(Parser::new("CCO").mol.atoms.capacity() >= 3);
    assert!(err(&long).contains("bracket atom"), "{}", err(&long));
}

#[test]
fn reads_the_common_constructs() {
    let m = parse("CC(=O)Oc1ccccc1C(=O)O").unwrap();
    assert_eq!(m.atoms.len(), 13);
    let m = parse("[13CH3][N+](C)(C)C.[Cl-]").unwrap();
    assert_eq!(m.atoms[0].isotope, Some(13));
    assert_eq!(m.total_charge(), 0);
    let m = parse("C%12CC%12").unwrap();
    assert_eq!(m.bonds.len(), 3);
    let m = parse("F/C=C/F").unwrap();
    assert_eq!(m.atoms.len(), 4);
    let m = parse("N[C@@H](C)C(=O)O").unwrap();
    assert_eq!(m.atoms[1].hydrogens, 1);
}

#[test]
fn errors_say_what_and_where() {
    assert_eq!(err("C1CC"), "ring closure 1 is never closed at position 2");
    assert_eq!(err("CC)"), "unmatched `)` at position 3");
    assert_eq!(err("C(C"), "unclosed branch `(` at position 2");
    assert_eq!(err("C[Xx]"), "unknown element `Xx` at position 3");
    assert_eq!(
        err("C[Og]"),
        "element `Og` is not supported by this model at position 3"
    );
    assert!(parse("C[Hg]Cl").is_ok(), "metals have no fixed valence");
    assert_eq!(err("C=="), "two bonds in a row (`=`) at position 3");
    assert_eq!(err("C?"), "unexpected character `?` at position 2");
    assert_eq!(err(""), "empty SMILES");
    assert!(err("[CH3").contains("unclosed `[`"), "{}", err("[CH3"));
    assert!(err("Xe").contains("organic-subset"));
    assert!(err("C C").contains("whitespace"));
}

#[test]
fn tokens_count_bracket_atoms_and_two_letter_elements_once() {
    assert_eq!(token_count("CC(=O)[NH3+]"), 7);
    assert_eq!(token_count("ClC%10CC%10Br"), 7);
}

#[test]
fn oversized_numbers_in_brackets_are_named() {
    let e = parse("[99999999999999999999C]").unwrap_err();
    assert!(e.message.contains("isotope"), "{}", e.message);
    let e = parse("[CH99999]").unwrap_err();
    assert!(e.message.contains("H99999"), "{}", e.message);
    assert!(parse("[13CH4]").is_ok());
    let e = parse("[C+99999999999]").unwrap_err();
    assert!(e.message.contains("charge"), "{}", e.message);
}
