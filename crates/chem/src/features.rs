//! Feature vectors for machine-learned models: a folded Morgan fingerprint followed by named
//! descriptors, in the order a model was trained with. One [`Featurizer`] serves training (the
//! `featurize` CLI) and serving (the ONNX model component), so both see identical numbers.

use crate::Molecule;
use crate::descriptors as d;
use crate::fingerprint::{Fingerprint, Morgan};
use std::cell::OnceCell;

/// A named numeric descriptor.
pub struct Descriptor {
    pub code: &'static str,
    pub name: &'static str,
    pub unit: &'static str,
    compute: fn(&Subject) -> f64,
}

/// A molecule and the Crippen contributions two descriptors share, computed at most once.
struct Subject<'a> {
    mol: &'a Molecule,
    crippen: OnceCell<(f64, f64)>,
}

impl Subject<'_> {
    fn crippen(&self) -> (f64, f64) {
        *self
            .crippen
            .get_or_init(|| crate::crippen::logp_mr(self.mol))
    }
}

/// Aromatic heavy atoms over heavy atoms: the "aromatic proportion" of Delaney's ESOL.
pub fn aromatic_proportion(mol: &Molecule) -> f64 {
    let heavy = d::heavy_atoms(mol);
    if heavy == 0 {
        return 0.0;
    }
    let aromatic = mol
        .atoms
        .iter()
        .filter(|a| a.aromatic && a.element.number > 1)
        .count();
    aromatic as f64 / heavy as f64
}

/// Every descriptor a featurizer can name.
pub const DESCRIPTORS: &[Descriptor] = &[
    Descriptor {
        code: "mol_weight",
        name: "Molecular weight (average)",
        unit: "g/mol",
        compute: |s| d::mol_weight(s.mol),
    },
    Descriptor {
        code: "logp",
        name: "Wildman-Crippen logP",
        unit: "log units",
        compute: |s| s.crippen().0,
    },
    Descriptor {
        code: "mr",
        name: "Wildman-Crippen molar refractivity",
        unit: "cm³/mol",
        compute: |s| s.crippen().1,
    },
    Descriptor {
        code: "tpsa",
        name: "Topological polar surface area",
        unit: "Å²",
        compute: |s| crate::tpsa::tpsa(s.mol),
    },
    Descriptor {
        code: "hbd",
        name: "Hydrogen-bond donors (Lipinski)",
        unit: "count",
        compute: |s| f64::from(d::lipinski_hbd(s.mol)),
    },
    Descriptor {
        code: "hba",
        name: "Hydrogen-bond acceptors (Lipinski)",
        unit: "count",
        compute: |s| d::lipinski_hba(s.mol) as f64,
    },
    Descriptor {
        code: "rotatable_bonds",
        name: "Rotatable bonds",
        unit: "count",
        compute: |s| crate::rotatable::count(s.mol) as f64,
    },
    Descriptor {
        code: "rings",
        name: "Rings (SSSR)",
        unit: "count",
        compute: |s| d::ring_count(s.mol) as f64,
    },
    Descriptor {
        code: "aromatic_rings",
        name: "Aromatic rings",
        unit: "count",
        compute: |s| d::aromatic_rings(s.mol) as f64,
    },
    Descriptor {
        code: "heavy_atoms",
        name: "Heavy atoms",
        unit: "count",
        compute: |s| d::heavy_atoms(s.mol) as f64,
    },
    Descriptor {
        code: "fraction_csp3",
        name: "Fraction of sp3 carbons",
        unit: "fraction",
        compute: |s| d::fraction_csp3(s.mol),
    },
    Descriptor {
        code: "aromatic_proportion",
        name: "Aromatic proportion (aromatic heavy atoms / heavy atoms)",
        unit: "fraction",
        compute: |s| aromatic_proportion(s.mol),
    },
];

pub fn descriptor(code: &str) -> Option<&'static Descriptor> {
    DESCRIPTORS.iter().find(|d| d.code == code)
}

/// The codes [`descriptor`] knows, for messages.
pub fn descriptor_codes() -> Vec<&'static str> {
    DESCRIPTORS.iter().map(|d| d.code).collect()
}

/// What a model's input vector is made of: `morgan.bits` fingerprint bits (0 or 1), then
/// the descriptors in order.
#[derive(Clone)]
pub struct Featurizer {
    pub morgan: Option<Morgan>,
    pub descriptors: Vec<&'static Descriptor>,
}

/// One molecule, featurized.
pub struct Features {
    pub fingerprint: Option<Fingerprint>,
    /// Descriptor values, in the featurizer's order.
    pub descriptors: Vec<f64>,
}

impl Featurizer {
    /// A featurizer from descriptor codes; an unknown code is an error naming the known ones.
    pub fn new(morgan: Option<Morgan>, codes: &[impl AsRef<str>]) -> Result<Self, String> {
        let descriptors = codes
            .iter()
            .map(|c| {
                descriptor(c.as_ref()).ok_or_else(|| {
                    format!(
                        "unknown descriptor `{}`; known: {}",
                        c.as_ref(),
                        descriptor_codes().join(", ")
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            morgan,
            descriptors,
        })
    }

    /// Length of the vector [`Features::vector`] gives.
    pub fn len(&self) -> usize {
        self.morgan.map_or(0, |m| m.bits) + self.descriptors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn features(&self, mol: &Molecule) -> Features {
        let subject = Subject {
            mol,
            crippen: OnceCell::new(),
        };
        Features {
            fingerprint: self.morgan.map(|m| m.fingerprint(mol)),
            descriptors: self
                .descriptors
                .iter()
                .map(|d| (d.compute)(&subject))
                .collect(),
        }
    }
}

impl Features {
    /// The model input: fingerprint bits as 0.0/1.0, then the descriptors.
    pub fn vector(&self) -> Vec<f32> {
        let mut v = Vec::new();
        if let Some(fp) = &self.fingerprint {
            v.extend((0..fp.len()).map(|i| if fp.get(i) { 1.0 } else { 0.0 }));
        }
        v.extend(self.descriptors.iter().map(|&x| x as f32));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smiles::parse;

    #[test]
    fn vector_is_bits_then_descriptors_in_order() {
        let f = Featurizer::new(
            Some(Morgan {
                radius: 2,
                bits: 128,
            }),
            &["heavy_atoms", "aromatic_proportion"],
        )
        .unwrap();
        assert_eq!(f.len(), 130);
        let v = f.features(&parse("c1ccccc1CO").unwrap()).vector();
        assert_eq!(v.len(), 130);
        assert!(v[..128].iter().all(|&x| x == 0.0 || x == 1.0));
        assert_eq!(v[128], 8.0);
        assert!((v[129] - 0.75).abs() < 1e-6);
    }

    #[test]
    fn unknown_descriptor_names_the_known_ones() {
        let e = Featurizer::new(None, &["logp", "colour"]).err().unwrap();
        assert!(e.contains("`colour`") && e.contains("mol_weight"), "{e}");
    }
}
