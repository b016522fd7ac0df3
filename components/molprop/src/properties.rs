//! The properties molprop predicts: one row each, with its unit, how it is computed, and the
//! range it was validated on.

use chem::Molecule;
use chem::descriptors as d;
use serde_json::{Value, json};

/// A parsed molecule and what more than one property needs, computed at most once.
pub struct Subject<'a> {
    pub mol: &'a Molecule,
    crippen: std::cell::OnceCell<(f64, f64)>,
}

impl<'a> Subject<'a> {
    pub fn new(mol: &'a Molecule) -> Self {
        Self {
            mol,
            crippen: std::cell::OnceCell::new(),
        }
    }

    /// Wildman-Crippen (logP, MR): one atom typing serves both.
    fn crippen(&self) -> (f64, f64) {
        *self
            .crippen
            .get_or_init(|| chem::crippen::logp_mr(self.mol))
    }
}

pub struct Property {
    pub code: &'static str,
    pub name: &'static str,
    pub unit: &'static str,
    pub compute: fn(&Subject) -> Value,
    /// (min, max, mean) over the 144-molecule validation set; `None` for non-numeric ones.
    pub validated: Option<(f64, f64, f64)>,
}

fn round(x: f64, places: i32) -> Value {
    let f = 10f64.powi(places);
    json!((x * f).round() / f)
}

pub const PROPERTIES: &[Property] = &[
    Property {
        code: "mol_weight",
        name: "Molecular weight (average)",
        unit: "g/mol",
        compute: |s| round(d::mol_weight(s.mol), 4),
        validated: Some((150.13, 515.542, 313.1852)),
    },
    Property {
        code: "exact_mass",
        name: "Monoisotopic mass",
        unit: "Da",
        compute: |s| round(d::exact_mass(s.mol), 5),
        validated: Some((150.05282, 515.18237, 312.8871)),
    },
    Property {
        code: "formula",
        name: "Molecular formula (Hill order)",
        unit: "",
        compute: |s| json!(d::formula(s.mol)),
        validated: None,
    },
    Property {
        code: "heavy_atoms",
        name: "Heavy (non-hydrogen) atoms",
        unit: "count",
        compute: |s| json!(d::heavy_atoms(s.mol)),
        validated: Some((10.0, 38.0, 22.25)),
    },
    Property {
        code: "logp",
        name: "Octanol-water partition coefficient (Wildman-Crippen logP)",
        unit: "log units",
        compute: |s| round(s.crippen().0, 4),
        validated: Some((-5.3972, 4.9853, 1.7904)),
    },
    Property {
        code: "mr",
        name: "Molar refractivity (Wildman-Crippen)",
        unit: "cm³/mol",
        compute: |s| round(s.crippen().1, 4),
        validated: Some((30.4711, 138.8775, 84.3201)),
    },
    Property {
        code: "tpsa",
        name: "Topological polar surface area (Ertl, N and O)",
        unit: "Å²",
        compute: |s| round(chem::tpsa::tpsa(s.mol), 4),
        validated: Some((4.44, 290.45, 79.9173)),
    },
    Property {
        code: "hbd",
        name: "Hydrogen-bond donors (Lipinski: N-H and O-H)",
        unit: "count",
        compute: |s| json!(d::lipinski_hbd(s.mol)),
        validated: Some((0.0, 8.0, 2.3889)),
    },
    Property {
        code: "hba",
        name: "Hydrogen-bond acceptors (Lipinski: N and O atoms)",
        unit: "count",
        compute: |s| json!(d::lipinski_hba(s.mol)),
        validated: Some((1.0, 18.0, 5.4792)),
    },
    Property {
        code: "rotatable_bonds",
        name: "Rotatable bonds (RDKit strict definition)",
        unit: "count",
        compute: |s| json!(chem::rotatable::count(s.mol)),
        validated: Some((0.0, 14.0, 4.0278)),
    },
    Property {
        code: "rings",
        name: "Rings (smallest set of smallest rings)",
        unit: "count",
        compute: |s| json!(d::ring_count(s.mol)),
        validated: Some((0.0, 5.0, 2.9375)),
    },
    Property {
        code: "aromatic_rings",
        name: "Aromatic rings",
        unit: "count",
        compute: |s| json!(d::aromatic_rings(s.mol)),
        validated: Some((0.0, 5.0, 1.8472)),
    },
    Property {
        code: "fraction_csp3",
        name: "Fraction of sp3 carbons",
        unit: "fraction",
        compute: |s| round(d::fraction_csp3(s.mol), 4),
        validated: Some((0.0, 1.0, 0.3665)),
    },
];

pub fn find(code: &str) -> Option<&'static Property> {
    PROPERTIES.iter().find(|p| p.code == code)
}

pub fn codes() -> Vec<&'static str> {
    PROPERTIES.iter().map(|p| p.code).chain(["all"]).collect()
}

/// The reliable range: the validated range widened by half its span each way; what cannot be
/// negative (every property but logP: masses, areas, counts, fractions) never below 0, and
/// fractions never above 1. (LogP's lower bound was once clamped at 0 too, which flagged
/// caffeine, logP -1.03 and one of the test examples, as outside the range.)
pub fn reliable(p: &Property) -> Option<(f64, f64)> {
    let (min, max, _) = p.validated?;
    let pad = (max - min) / 2.0;
    let lo = if p.unit == "log units" {
        min - pad
    } else {
        (min - pad).max(0.0)
    };
    let hi = if p.unit == "fraction" { 1.0 } else { max + pad };
    Some((lo, hi))
}

/// Whether `value` is inside the reliable range of `p` (true for non-numeric properties).
pub fn in_reliable_range(p: &Property, value: &Value) -> bool {
    match (reliable(p), value.as_f64()) {
        (Some((lo, hi)), Some(v)) => (lo..=hi).contains(&v),
        _ => true,
    }
}
