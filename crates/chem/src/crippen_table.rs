//! Generated from `data/crippen.tsv` by the test `the_compiled_table_is_the_data_file`
//! (`UPDATE_GENERATED=1 cargo test -p chem` rewrites it). Do not edit.
//! Over 400 lines: one entry per atom type of the table, generated.

use super::AtomType;
use crate::smarts::{BondExpr, Expr, Pattern, Prim};

pub(super) static TABLE: &[AtomType] = &[
    AtomType {
        label: "C1",
        logp: 0.1441,
        mr: 2.503,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(4))])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "C1",
        logp: 0.1441,
        mr: 2.503,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(3))]), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C1",
        logp: 0.1441,
        mr: 2.503,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(2))]), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C2",
        logp: 0.0,
        mr: 2.433,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(1))]), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C2",
        logp: 0.0,
        mr: 2.433,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C3",
        logp: -0.2035,
        mr: 2.753,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(3))]), Expr::Or(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 15, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 16, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 9, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 17, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 35, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 53, aromatic: Some(false) })])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C3",
        logp: -0.2035,
        mr: 2.753,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(2)), Expr::Prim(Prim::Connections(4))]), Expr::Or(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 15, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 16, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 9, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 17, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 35, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 53, aromatic: Some(false) })]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C4",
        logp: -0.2051,
        mr: 2.731,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(1)), Expr::Prim(Prim::Connections(4))]), Expr::Or(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 15, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 16, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 9, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 17, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 35, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 53, aromatic: Some(false) })]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C4",
        logp: -0.2051,
        mr: 2.731,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(0)), Expr::Prim(Prim::Connections(4))]), Expr::Or(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 15, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 16, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 9, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 17, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 35, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 53, aromatic: Some(false) })]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C5",
        logp: -0.2783,
        mr: 5.007,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::And(&[Expr::Not(&Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) })), Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double)],
        },
    },
    AtomType {
        label: "C6",
        logp: 0.1551,
        mr: 3.513,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(2))]), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double)],
        },
    },
    AtomType {
        label: "C6",
        logp: 0.1551,
        mr: 3.513,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(1))]), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C6",
        logp: 0.1551,
        mr: 3.513,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(0))]), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C6",
        logp: 0.1551,
        mr: 3.513,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (0, BondExpr::Double)],
        },
    },
    AtomType {
        label: "C7",
        logp: 0.0017,
        mr: 3.888,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Connections(2))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Triple)],
        },
    },
    AtomType {
        label: "C8",
        logp: 0.08452,
        mr: 2.464,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(3))]), Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C9",
        logp: -0.1444,
        mr: 2.412,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(3))]), Expr::Prim(Prim::Aromatic)],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C10",
        logp: -0.0516,
        mr: 2.488,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(2)), Expr::Prim(Prim::Connections(4))]), Expr::Prim(Prim::Aromatic)],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C11",
        logp: 0.1193,
        mr: 2.582,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(1)), Expr::Prim(Prim::Connections(4))]), Expr::Prim(Prim::Aromatic)],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C12",
        logp: -0.0967,
        mr: 2.576,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(0)), Expr::Prim(Prim::Connections(4))]), Expr::Prim(Prim::Aromatic)],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C13",
        logp: -0.5443,
        mr: 4.041,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::Prim(Prim::Hydrogens(0))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 16, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 9, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 17, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 35, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 53, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Single)],
        },
    },
    AtomType {
        label: "C14",
        logp: 0.0,
        mr: 3.257,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::Prim(Prim::Element { number: 9, aromatic: None })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C15",
        logp: 0.245,
        mr: 3.564,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::Prim(Prim::Element { number: 17, aromatic: None })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C16",
        logp: 0.198,
        mr: 3.18,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::Prim(Prim::Element { number: 35, aromatic: None })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C17",
        logp: 0.0,
        mr: 3.104,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::Prim(Prim::Element { number: 53, aromatic: None })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C18",
        logp: 0.1581,
        mr: 3.35,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::Prim(Prim::Hydrogens(1))])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "C19",
        logp: 0.2955,
        mr: 4.346,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Aromatic)],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Aromatic), (0, BondExpr::Aromatic), (0, BondExpr::Aromatic)],
        },
    },
    AtomType {
        label: "C20",
        logp: 0.2713,
        mr: 3.904,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Aromatic)],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Aromatic), (0, BondExpr::Aromatic), (0, BondExpr::Single)],
        },
    },
    AtomType {
        label: "C21",
        logp: 0.136,
        mr: 3.509,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Aromatic), (0, BondExpr::Aromatic), (0, BondExpr::Single)],
        },
    },
    AtomType {
        label: "C22",
        logp: 0.4619,
        mr: 4.067,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Aromatic), (0, BondExpr::Aromatic), (0, BondExpr::Single)],
        },
    },
    AtomType {
        label: "C23",
        logp: 0.5437,
        mr: 3.853,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Aromatic), (0, BondExpr::Aromatic), (0, BondExpr::Single)],
        },
    },
    AtomType {
        label: "C24",
        logp: 0.1893,
        mr: 2.673,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Element { number: 16, aromatic: Some(false) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Aromatic), (0, BondExpr::Aromatic), (0, BondExpr::Single)],
        },
    },
    AtomType {
        label: "C25",
        logp: -0.8186,
        mr: 3.135,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Aromatic), Expr::Or(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) })])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Aromatic), (0, BondExpr::Aromatic), (0, BondExpr::Double)],
        },
    },
    AtomType {
        label: "C26",
        logp: 0.264,
        mr: 4.305,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Aromatic), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C26",
        logp: 0.264,
        mr: 4.305,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::Prim(Prim::Aromatic)],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C26",
        logp: 0.264,
        mr: 4.305,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(1))]), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Aromatic)],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "C26",
        logp: 0.264,
        mr: 4.305,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double)],
        },
    },
    AtomType {
        label: "C27",
        logp: 0.2148,
        mr: 2.693,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Connections(4))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 15, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 16, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 9, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 17, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 35, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 53, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "CS",
        logp: 0.08129,
        mr: 3.243,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 6, aromatic: None })],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "H1",
        logp: 0.123,
        mr: 1.057,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 1, aromatic: None }), Expr::Or(&[Expr::Prim(Prim::Element { number: 6, aromatic: None }), Expr::Prim(Prim::Element { number: 1, aromatic: None })])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "H2",
        logp: -0.2677,
        mr: 1.395,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 1, aromatic: None }), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Or(&[Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Connections(4))]), Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) })])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (1, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "H2",
        logp: -0.2677,
        mr: 1.395,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 1, aromatic: None }), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::And(&[Expr::Not(&Expr::Prim(Prim::Element { number: 6, aromatic: None })), Expr::Not(&Expr::Prim(Prim::Element { number: 7, aromatic: None })), Expr::Not(&Expr::Prim(Prim::Element { number: 8, aromatic: None })), Expr::Not(&Expr::Prim(Prim::Element { number: 16, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (1, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "H2",
        logp: -0.2677,
        mr: 1.395,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 1, aromatic: None }), Expr::And(&[Expr::Not(&Expr::Prim(Prim::Element { number: 6, aromatic: None })), Expr::Not(&Expr::Prim(Prim::Element { number: 7, aromatic: None })), Expr::Not(&Expr::Prim(Prim::Element { number: 8, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "H3",
        logp: 0.2142,
        mr: 0.9627,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 1, aromatic: None }), Expr::Prim(Prim::Element { number: 7, aromatic: None })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "H3",
        logp: 0.2142,
        mr: 0.9627,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 1, aromatic: None }), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 7, aromatic: None })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (1, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "H4",
        logp: 0.298,
        mr: 1.805,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 1, aromatic: None }), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Or(&[Expr::Prim(Prim::Element { number: 6, aromatic: None }), Expr::Prim(Prim::Element { number: 7, aromatic: None }), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 16, aromatic: Some(false) })])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (1, BondExpr::SingleOrAromatic), (2, BondExpr::Double)],
        },
    },
    AtomType {
        label: "H4",
        logp: 0.298,
        mr: 1.805,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 1, aromatic: None }), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Or(&[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 16, aromatic: Some(false) })])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (1, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "HS",
        logp: 0.1125,
        mr: 1.112,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 1, aromatic: None })],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "N1",
        logp: -1.019,
        mr: 2.262,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(2)), Expr::Prim(Prim::Charge(0))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "N2",
        logp: -0.7096,
        mr: 2.173,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(1)), Expr::Prim(Prim::Charge(0))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "N3",
        logp: -1.027,
        mr: 2.827,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(2)), Expr::Prim(Prim::Charge(0))]), Expr::Prim(Prim::Aromatic)],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "N4",
        logp: -0.5188,
        mr: 3.0,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(1)), Expr::Prim(Prim::Charge(0))]), Expr::And(&[Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None })), Expr::Or(&[Expr::Prim(Prim::Aliphatic), Expr::Prim(Prim::Aromatic)])]), Expr::Prim(Prim::Aromatic)],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "N5",
        logp: 0.08387,
        mr: 1.757,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(1)), Expr::Prim(Prim::Charge(0))]), Expr::And(&[Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None })), Expr::Or(&[Expr::Prim(Prim::Aliphatic), Expr::Prim(Prim::Aromatic)])])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double)],
        },
    },
    AtomType {
        label: "N6",
        logp: 0.1836,
        mr: 2.428,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Charge(0))]), Expr::And(&[Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None })), Expr::Or(&[Expr::Prim(Prim::Aliphatic), Expr::Prim(Prim::Aromatic)])]), Expr::And(&[Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None })), Expr::Or(&[Expr::Prim(Prim::Aliphatic), Expr::Prim(Prim::Aromatic)])])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "N7",
        logp: -0.3187,
        mr: 1.839,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Charge(0))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "N8",
        logp: -0.4458,
        mr: 2.819,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Charge(0))]), Expr::Prim(Prim::Aromatic), Expr::And(&[Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None })), Expr::Or(&[Expr::Prim(Prim::Aliphatic), Expr::Prim(Prim::Aromatic)])]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "N8",
        logp: -0.4458,
        mr: 2.819,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Charge(0))]), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Aromatic), Expr::Prim(Prim::Aromatic)],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "N9",
        logp: 0.01508,
        mr: 1.725,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Charge(0))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Triple)],
        },
    },
    AtomType {
        label: "N10",
        logp: -1.95,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Or(&[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(3))]), Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(2))]), Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(1))])]), Expr::Or(&[Expr::Prim(Prim::Charge(1)), Expr::Prim(Prim::Charge(2)), Expr::Prim(Prim::Charge(3))])])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "N11",
        logp: -0.3239,
        mr: 2.202,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(true) }), Expr::Prim(Prim::Charge(0))])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "N12",
        logp: -1.119,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(true) }), Expr::Or(&[Expr::Prim(Prim::Charge(1)), Expr::Prim(Prim::Charge(2)), Expr::Prim(Prim::Charge(3))])])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "N13",
        logp: -0.3396,
        mr: 0.2604,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(0))]), Expr::Or(&[Expr::Prim(Prim::Charge(1)), Expr::Prim(Prim::Charge(2)), Expr::Prim(Prim::Charge(3))])]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "N13",
        logp: -0.3396,
        mr: 0.2604,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(0))]), Expr::Or(&[Expr::Prim(Prim::Charge(1)), Expr::Prim(Prim::Charge(2)), Expr::Prim(Prim::Charge(3))])]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))]), Expr::And(&[Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None })), Expr::Or(&[Expr::Prim(Prim::Aliphatic), Expr::Prim(Prim::Aromatic)])])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "N13",
        logp: -0.3396,
        mr: 0.2604,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(0))]), Expr::Or(&[Expr::Prim(Prim::Charge(1)), Expr::Prim(Prim::Charge(2)), Expr::Prim(Prim::Charge(3))])]), Expr::Prim(Prim::Element { number: 6, aromatic: None }), Expr::Prim(Prim::Element { number: 7, aromatic: None })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (0, BondExpr::Double)],
        },
    },
    AtomType {
        label: "N14",
        logp: 0.2887,
        mr: 3.359,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Or(&[Expr::Prim(Prim::Charge(1)), Expr::Prim(Prim::Charge(2)), Expr::Prim(Prim::Charge(3))])]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Triple)],
        },
    },
    AtomType {
        label: "N14",
        logp: 0.2887,
        mr: 3.359,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Or(&[Expr::Prim(Prim::Charge(-1)), Expr::Prim(Prim::Charge(-2)), Expr::Prim(Prim::Charge(-3))])])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "N14",
        logp: 0.2887,
        mr: 3.359,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Or(&[Expr::Prim(Prim::Charge(1)), Expr::Prim(Prim::Charge(2)), Expr::Prim(Prim::Charge(3))])]), Expr::And(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Or(&[Expr::Prim(Prim::Charge(-1)), Expr::Prim(Prim::Charge(-2)), Expr::Prim(Prim::Charge(-3))])]), Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (0, BondExpr::Double)],
        },
    },
    AtomType {
        label: "NS",
        logp: -0.4806,
        mr: 2.134,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 7, aromatic: None })],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "O1",
        logp: 0.1552,
        mr: 1.08,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: Some(true) })],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "O2",
        logp: -0.2893,
        mr: 0.8238,
        pattern: Pattern {
            atoms: &[Expr::Or(&[Expr::And(&[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(1))]), Expr::And(&[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(2))])])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "O3",
        logp: -0.0684,
        mr: 1.085,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))]), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "O4",
        logp: -0.4195,
        mr: 1.182,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Aromatic), Expr::And(&[Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None })), Expr::Or(&[Expr::Prim(Prim::Aliphatic), Expr::Prim(Prim::Aromatic)])])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "O5",
        logp: 0.0335,
        mr: 3.367,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Or(&[Expr::Prim(Prim::Element { number: 7, aromatic: None }), Expr::Prim(Prim::Element { number: 8, aromatic: None })])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double)],
        },
    },
    AtomType {
        label: "O5",
        logp: 0.0335,
        mr: 3.367,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::And(&[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Connections(1))]), Expr::Or(&[Expr::Prim(Prim::Charge(-1)), Expr::Prim(Prim::Charge(-2)), Expr::Prim(Prim::Charge(-3))])]), Expr::Prim(Prim::Element { number: 7, aromatic: None })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "O6",
        logp: -0.3339,
        mr: 0.7774,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::And(&[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Connections(1))]), Expr::Or(&[Expr::Prim(Prim::Charge(-1)), Expr::Prim(Prim::Charge(-2)), Expr::Prim(Prim::Charge(-2))])]), Expr::Prim(Prim::Element { number: 16, aromatic: None })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "O6",
        logp: -0.3339,
        mr: 0.7774,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Charge(0))]), Expr::And(&[Expr::Prim(Prim::Element { number: 16, aromatic: None }), Expr::Prim(Prim::Charge(0))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double)],
        },
    },
    AtomType {
        label: "O12",
        logp: -1.326,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Charge(-1))]), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic), (1, BondExpr::Double)],
        },
    },
    AtomType {
        label: "O7",
        logp: -1.189,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::And(&[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Connections(1))]), Expr::Or(&[Expr::Prim(Prim::Charge(-1)), Expr::Prim(Prim::Charge(-2)), Expr::Prim(Prim::Charge(-3))])]), Expr::And(&[Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None })), Expr::Not(&Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) })), Expr::Not(&Expr::Prim(Prim::Element { number: 16, aromatic: Some(false) }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "O8",
        logp: 0.1788,
        mr: 3.135,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double)],
        },
    },
    AtomType {
        label: "O9",
        logp: -0.1526,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(1))]), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (1, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "O9",
        logp: -0.1526,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (1, BondExpr::SingleOrAromatic), (1, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "O9",
        logp: -0.1526,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(1))]), Expr::Or(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) })])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (1, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "O9",
        logp: -0.1526,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(2))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double)],
        },
    },
    AtomType {
        label: "O9",
        logp: -0.1526,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Connections(2))]), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (1, BondExpr::Double)],
        },
    },
    AtomType {
        label: "O10",
        logp: 0.1129,
        mr: 0.2215,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::And(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Hydrogens(1))]), Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) })],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (1, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "O10",
        logp: 0.1129,
        mr: 0.2215,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Or(&[Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) })]), Expr::And(&[Expr::Prim(Prim::Aromatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (1, BondExpr::SingleOrAromatic), (1, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "O10",
        logp: 0.1129,
        mr: 0.2215,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(true) }), Expr::And(&[Expr::Prim(Prim::Aliphatic), Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (1, BondExpr::SingleOrAromatic), (1, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "O11",
        logp: 0.4833,
        mr: 0.389,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 6, aromatic: Some(false) }), Expr::And(&[Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None })), Expr::Not(&Expr::Prim(Prim::Element { number: 6, aromatic: None }))]), Expr::And(&[Expr::Not(&Expr::Prim(Prim::Element { number: 1, aromatic: None })), Expr::Not(&Expr::Prim(Prim::Element { number: 6, aromatic: None }))])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double), (1, BondExpr::SingleOrAromatic), (1, BondExpr::SingleOrAromatic)],
        },
    },
    AtomType {
        label: "OS",
        logp: -0.1188,
        mr: 0.6865,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 8, aromatic: None })],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "F",
        logp: 0.4202,
        mr: 1.108,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 9, aromatic: None }), Expr::Prim(Prim::Charge(0))])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "Cl",
        logp: 0.6895,
        mr: 5.853,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 17, aromatic: None }), Expr::Prim(Prim::Charge(0))])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "Br",
        logp: 0.8456,
        mr: 8.927,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 35, aromatic: None }), Expr::Prim(Prim::Charge(0))])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "I",
        logp: 0.8857,
        mr: 14.02,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 53, aromatic: None }), Expr::Prim(Prim::Charge(0))])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "Hal",
        logp: -2.996,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Or(&[Expr::Prim(Prim::Element { number: 9, aromatic: None }), Expr::Prim(Prim::Element { number: 17, aromatic: None }), Expr::Prim(Prim::Element { number: 35, aromatic: None }), Expr::Prim(Prim::Element { number: 53, aromatic: None })]), Expr::Prim(Prim::Charge(-1))])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "Hal",
        logp: -2.996,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 53, aromatic: None }), Expr::Or(&[Expr::Prim(Prim::Charge(1)), Expr::Prim(Prim::Charge(2)), Expr::Prim(Prim::Charge(3))])])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "Hal",
        logp: -2.996,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Charge(1)), Expr::Or(&[Expr::Prim(Prim::Element { number: 3, aromatic: None }), Expr::Prim(Prim::Element { number: 11, aromatic: None }), Expr::Prim(Prim::Element { number: 19, aromatic: None }), Expr::Prim(Prim::Element { number: 37, aromatic: None }), Expr::Prim(Prim::Element { number: 55, aromatic: None })])])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "P",
        logp: 0.8612,
        mr: 6.92,
        pattern: Pattern {
            atoms: &[Expr::Prim(Prim::Element { number: 15, aromatic: None })],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "S2",
        logp: -0.0024,
        mr: 7.365,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 16, aromatic: Some(false) }), Expr::Or(&[Expr::Prim(Prim::Charge(-1)), Expr::Prim(Prim::Charge(-2)), Expr::Prim(Prim::Charge(-3)), Expr::Prim(Prim::Charge(-4)), Expr::Prim(Prim::Charge(1)), Expr::Prim(Prim::Charge(2)), Expr::Prim(Prim::Charge(3)), Expr::Prim(Prim::Charge(5)), Expr::Prim(Prim::Charge(6))])])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "S2",
        logp: -0.0024,
        mr: 7.365,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 16, aromatic: Some(false) }), Expr::Prim(Prim::Charge(0))]), Expr::Or(&[Expr::Prim(Prim::Element { number: 7, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 8, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 15, aromatic: Some(false) }), Expr::Prim(Prim::Element { number: 16, aromatic: Some(false) })])],
            parents: &[(usize::MAX, BondExpr::Any), (0, BondExpr::Double)],
        },
    },
    AtomType {
        label: "S1",
        logp: 0.6482,
        mr: 7.591,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 16, aromatic: Some(false) }), Expr::Prim(Prim::Aliphatic)])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "S3",
        logp: 0.6237,
        mr: 6.691,
        pattern: Pattern {
            atoms: &[Expr::And(&[Expr::Prim(Prim::Element { number: 16, aromatic: Some(true) }), Expr::Prim(Prim::Aromatic)])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "Me1",
        logp: -0.3808,
        mr: 5.754,
        pattern: Pattern {
            atoms: &[Expr::Or(&[Expr::Prim(Prim::Element { number: 3, aromatic: None }), Expr::Prim(Prim::Element { number: 11, aromatic: None }), Expr::Prim(Prim::Element { number: 19, aromatic: None }), Expr::Prim(Prim::Element { number: 37, aromatic: None }), Expr::Prim(Prim::Element { number: 55, aromatic: None })])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "Me1",
        logp: -0.3808,
        mr: 5.754,
        pattern: Pattern {
            atoms: &[Expr::Or(&[Expr::Prim(Prim::Element { number: 4, aromatic: None }), Expr::Prim(Prim::Element { number: 12, aromatic: None }), Expr::Prim(Prim::Element { number: 20, aromatic: None }), Expr::Prim(Prim::Element { number: 38, aromatic: None }), Expr::Prim(Prim::Element { number: 56, aromatic: None })])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "Me1",
        logp: -0.3808,
        mr: 5.754,
        pattern: Pattern {
            atoms: &[Expr::Or(&[Expr::Prim(Prim::Element { number: 5, aromatic: None }), Expr::Prim(Prim::Element { number: 13, aromatic: None }), Expr::Prim(Prim::Element { number: 31, aromatic: None }), Expr::Prim(Prim::Element { number: 49, aromatic: None }), Expr::Prim(Prim::Element { number: 81, aromatic: None })])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "Me1",
        logp: -0.3808,
        mr: 5.754,
        pattern: Pattern {
            atoms: &[Expr::Or(&[Expr::Prim(Prim::Element { number: 14, aromatic: None }), Expr::Prim(Prim::Element { number: 32, aromatic: None }), Expr::Prim(Prim::Element { number: 50, aromatic: None }), Expr::Prim(Prim::Element { number: 82, aromatic: None })])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "Me1",
        logp: -0.3808,
        mr: 5.754,
        pattern: Pattern {
            atoms: &[Expr::Or(&[Expr::Prim(Prim::Element { number: 33, aromatic: None }), Expr::Prim(Prim::Element { number: 51, aromatic: None }), Expr::Prim(Prim::Element { number: 83, aromatic: None })])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "Me1",
        logp: -0.3808,
        mr: 5.754,
        pattern: Pattern {
            atoms: &[Expr::Or(&[Expr::Prim(Prim::Element { number: 34, aromatic: None }), Expr::Prim(Prim::Element { number: 52, aromatic: None }), Expr::Prim(Prim::Element { number: 84, aromatic: None })])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "Me2",
        logp: -0.0025,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::Or(&[Expr::Prim(Prim::Element { number: 21, aromatic: None }), Expr::Prim(Prim::Element { number: 22, aromatic: None }), Expr::Prim(Prim::Element { number: 23, aromatic: None }), Expr::Prim(Prim::Element { number: 24, aromatic: None }), Expr::Prim(Prim::Element { number: 25, aromatic: None }), Expr::Prim(Prim::Element { number: 26, aromatic: None }), Expr::Prim(Prim::Element { number: 27, aromatic: None }), Expr::Prim(Prim::Element { number: 28, aromatic: None }), Expr::Prim(Prim::Element { number: 29, aromatic: None }), Expr::Prim(Prim::Element { number: 30, aromatic: None })])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "Me2",
        logp: -0.0025,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::Or(&[Expr::Prim(Prim::Element { number: 39, aromatic: None }), Expr::Prim(Prim::Element { number: 40, aromatic: None }), Expr::Prim(Prim::Element { number: 41, aromatic: None }), Expr::Prim(Prim::Element { number: 42, aromatic: None }), Expr::Prim(Prim::Element { number: 43, aromatic: None }), Expr::Prim(Prim::Element { number: 44, aromatic: None }), Expr::Prim(Prim::Element { number: 45, aromatic: None }), Expr::Prim(Prim::Element { number: 46, aromatic: None }), Expr::Prim(Prim::Element { number: 47, aromatic: None }), Expr::Prim(Prim::Element { number: 48, aromatic: None })])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
    AtomType {
        label: "Me2",
        logp: -0.0025,
        mr: 0.0,
        pattern: Pattern {
            atoms: &[Expr::Or(&[Expr::Prim(Prim::Element { number: 72, aromatic: None }), Expr::Prim(Prim::Element { number: 73, aromatic: None }), Expr::Prim(Prim::Element { number: 74, aromatic: None }), Expr::Prim(Prim::Element { number: 75, aromatic: None }), Expr::Prim(Prim::Element { number: 76, aromatic: None }), Expr::Prim(Prim::Element { number: 77, aromatic: None }), Expr::Prim(Prim::Element { number: 78, aromatic: None }), Expr::Prim(Prim::Element { number: 79, aromatic: None }), Expr::Prim(Prim::Element { number: 80, aromatic: None })])],
            parents: &[(usize::MAX, BondExpr::Any)],
        },
    },
];
