//! What molprop says about itself: `/info`, `/capabilities`, `/acceptable_ranges`,
//! `/citation`, `/test_examples`. Figures are the published ones or our own measurements
//! against RDKit; nothing is invented ("not reported" where a paper gives no number).

use crate::properties::{PROPERTIES, reliable};
use model_sdk::*;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

pub const NAME: &str = "molprop";
const VERSION: &str = env!("CARGO_PKG_VERSION");

pub fn info() -> ModelInfo {
    ModelInfo {
        name: NAME.into(),
        description:
            "Molecular properties from a SMILES string: formula, average and monoisotopic \
                      mass, heavy atoms, Wildman-Crippen logP and molar refractivity, topological \
                      polar surface area (Ertl), Lipinski donors and acceptors, rotatable bonds, \
                      ring and aromatic ring counts, fraction of sp3 carbons. Deterministic, \
                      computed from published definitions and parameters and checked against \
                      RDKit 2026.09.1."
                .into(),
        license: "MIT".into(),
        citation: "https://doi.org/10.1021/jm000942e".into(),
        maintainer: "Lightweight model runtime project (edge deployment team)".into(),
        model_version: None,
    }
}

pub fn capabilities() -> Capabilities {
    let schema = |pairs: &[(&str, OutputType)]| -> BTreeMap<String, OutputType> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    };
    let common = [
        ("property_type", OutputType::String),
        ("input", OutputType::String),
        ("unit", OutputType::String),
    ];
    let with = |prediction: OutputType| {
        let mut s = schema(&common);
        s.insert("prediction".into(), prediction);
        s
    };
    Capabilities {
        model: NAME.into(),
        capabilities: vec![
            Capability {
                name: "regression".into(),
                input_types: vec![InputType::Text],
                output_schema: with(OutputType::Float),
                description: "One numeric property of a molecule given as SMILES in data.text (or \
                              data.smiles); data.property selects it: mol_weight, exact_mass, \
                              heavy_atoms, logp, mr, tpsa, hbd, hba, rotatable_bonds, rings, \
                              aromatic_rings, fraction_csp3."
                    .into(),
            },
            Capability {
                name: "formula".into(),
                input_types: vec![InputType::Text],
                output_schema: with(OutputType::String),
                description:
                    "Molecular formula in Hill order, charge appended (data.property = formula)."
                        .into(),
            },
            Capability {
                name: "profile".into(),
                input_types: vec![InputType::Text],
                output_schema: with(OutputType::Object),
                description:
                    "Every property at once as an object (data.property = all, the default).".into(),
            },
        ],
        elements: Some(
            chem::element::ELEMENTS
                .iter()
                .map(|e| e.symbol.to_owned())
                .collect(),
        ),
    }
}

pub fn acceptable_ranges() -> AcceptableRanges {
    let property_ranges = PROPERTIES
        .iter()
        .filter_map(|p| {
            let (min, max, mean) = p.validated?;
            let (lo, hi) = reliable(p)?;
            Some((
                p.code.to_owned(),
                PropertyRange {
                    property_name: p.name.into(),
                    unit: p.unit.into(),
                    training_range: TrainingRange { min, max, mean },
                    reliable_range: ReliableRange {
                        min: lo,
                        max: hi,
                        note: "validated range widened by half its span; the definition itself holds \
                               for any valid molecule, but agreement with RDKit was measured inside \
                               the validated range"
                            .into(),
                    },
                    training_samples: 144,
                    validation_metrics: ValidationMetrics {
                        r2: "1.00 (144/144 molecules agree with RDKit 2026.09.1)".into(),
                        typical_error: "below 0.0001 (rounding only)".into(),
                        extra: published_accuracy(p.code),
                    },
                },
            ))
        })
        .collect();
    AcceptableRanges {
        model: NAME.into(),
        version: SPEC_VERSION.into(),
        description: "molprop is computed, not trained: there is no training set. The ranges are those \
                      of its validation set, 144 drug-like molecules (a CDK2 ligand set, a ZINC sample \
                      and a matched-pair sample shipped with RDKit), on which every property agrees \
                      with RDKit 2026.09.1. training_samples therefore counts validation molecules."
            .into(),
        property_ranges,
        chemical_scope: ChemicalScope {
            supported_features: vec![
                "organic molecules of H, B, C, N, O, F, Si, P, S, Cl, Se, Br, I and common salt ions (Li, Na, K, Mg, Ca, Al, Fe, Cu, Zn, As)".into(),
                "SMILES in aromatic or Kekulé form, charges, isotopes, explicit hydrogens, ring closures including %nn, branches, stereo marks (ignored), disconnected parts (salts)".into(),
            ],
            limitations: vec![
                "inputs above 1024 SMILES tokens are outside the validated scope and refused".into(),
                "aromaticity is perceived in RDKit's model from the Kekulé structure, so aromatic and Kekulé SMILES give the same values; large polycyclic systems (porphyrins, big fused aromatics) may differ from RDKit in which fused rings count as aromatic".into(),
                "dative bonds (->) and wildcard atoms (*) are not accepted".into(),
                "properties of disconnected parts (salts) are summed over all parts".into(),
            ],
        },
        usage_recommendations: vec![
            "send one molecule per request as data.text (or data.smiles) with data.property".into(),
            "check success: an unparsable molecule answers 200 with success false and says what and where".into(),
            "use property all to get every value in one call".into(),
            "treat results outside the reliable range (in_reliable_range false) with care".into(),
        ],
        input: None,
    }
}

/// Our agreement with RDKit, plus what the method's authors report about the method itself
/// against experiment ("not reported" where they give no figure).
fn published_accuracy(code: &str) -> Map<String, Value> {
    let mut m = Map::from_iter([(
        "reference".to_owned(),
        json!("shared/testdata/molprop-reference.tsv, values from RDKit 2026.09.1"),
    )]);
    let published = match code {
        "logp" => {
            json!({"source": "Wildman & Crippen 1999", "training_molecules": 9920, "R2": "0.918", "sigma": "0.677 log units"})
        }
        "mr" => {
            json!({"source": "Wildman & Crippen 1999", "training_molecules": 3412, "R2": "0.994", "sigma": "0.778"})
        }
        "tpsa" => {
            json!({"source": "Ertl, Rohde & Selzer 2000", "note": "fragment sum reproduces 3D polar surface area; error figures not reported here"})
        }
        _ => json!("exact by definition (counts and masses); no model error"),
    };
    m.insert("published".to_owned(), published);
    m
}

pub fn citation() -> Citation {
    Citation {
        paper_citation: [
            "Ertl P., Rohde B., Selzer P. Fast calculation of molecular polar surface area as a sum of fragment-based contributions and its application to the prediction of drug transport properties. J. Med. Chem. 2000, 43, 3714-3717. doi:10.1021/jm000942e",
            "Lipinski C. A., Lombardo F., Dominy B. W., Feeney P. J. Experimental and computational approaches to estimate solubility and permeability in drug discovery and development settings. Adv. Drug Deliv. Rev. 1997, 23, 3-25. doi:10.1016/S0169-409X(96)00423-1",
            "Wildman S. A., Crippen G. M. Prediction of physicochemical parameters by atomic contributions. J. Chem. Inf. Comput. Sci. 1999, 39, 868-873. doi:10.1021/ci990307l",
        ]
        .join("\n"),
        software_bibtex: format!(
            "@software{{molprop,\n  title = {{molprop: molecular properties from SMILES as a Lightweight AI Model Runtime Interface 1.2 component}},\n  version = {{{VERSION}}},\n  year = {{2026}},\n  license = {{MIT}},\n  note = {{WebAssembly component (wasm32-wasip2) served by runtime-host or Spin}}\n}}"
        ),
    }
}

/// The examples with their documented expected values (formula, mass and TPSA as PubChem lists
/// them; logP as RDKit computes it), which the tests check.
pub struct ExampleSpec {
    pub name: &'static str,
    pub smiles: &'static str,
    pub category: &'static str,
    pub description: &'static str,
    pub formula: &'static str,
    pub mol_weight: f64,
    pub tpsa: f64,
    pub logp: f64,
}

pub const EXAMPLES: &[ExampleSpec] = &[
    ExampleSpec {
        name: "aspirin",
        smiles: "CC(=O)Oc1ccccc1C(=O)O",
        category: "drug",
        description: "acetylsalicylic acid, an analgesic",
        formula: "C9H8O4",
        mol_weight: 180.159,
        tpsa: 63.6,
        logp: 1.3101,
    },
    ExampleSpec {
        name: "caffeine",
        smiles: "Cn1cnc2c1c(=O)n(C)c(=O)n2C",
        category: "drug",
        description: "a purine alkaloid stimulant",
        formula: "C8H10N4O2",
        mol_weight: 194.194,
        tpsa: 61.82,
        logp: -1.0293,
    },
    ExampleSpec {
        name: "ibuprofen",
        smiles: "CC(C)Cc1ccc(cc1)C(C)C(=O)O",
        category: "drug",
        description: "a propionic acid NSAID",
        formula: "C13H18O2",
        mol_weight: 206.285,
        tpsa: 37.3,
        logp: 3.0732,
    },
    ExampleSpec {
        name: "paracetamol",
        smiles: "CC(=O)Nc1ccc(O)cc1",
        category: "drug",
        description: "acetaminophen, an analgesic",
        formula: "C8H9NO2",
        mol_weight: 151.165,
        tpsa: 49.33,
        logp: 1.3506,
    },
    ExampleSpec {
        name: "benzene",
        smiles: "c1ccccc1",
        category: "reference",
        description: "the aromatic parent hydrocarbon",
        formula: "C6H6",
        mol_weight: 78.114,
        tpsa: 0.0,
        logp: 1.6866,
    },
];

pub fn test_examples() -> TestExamples {
    let examples = EXAMPLES
        .iter()
        .map(|e| Example {
            name: e.name.into(),
            description: format!(
                "{}; expected formula {}, mol_weight {}, tpsa {}, logp {}",
                e.description, e.formula, e.mol_weight, e.tpsa, e.logp
            ),
            category: e.category.into(),
            input: Map::from_iter([
                ("smiles".to_owned(), json!(e.smiles)),
                (
                    "expected".to_owned(),
                    json!({"formula": e.formula, "mol_weight": e.mol_weight, "tpsa": e.tpsa, "logp": e.logp}),
                ),
            ]),
        })
        .collect();
    TestExamples {
        examples,
        usage_instructions: UsageInstructions {
            endpoint: "/predict".into(),
            method: "POST".into(),
            body_format: json!({"input_type": "text", "data": {"text": "<SMILES>", "property": "<property code or all>"}}),
        },
        expected_output: json!({
            "success": "true when the molecule was understood",
            "model_name": NAME,
            "results": {
                "prediction": "the value (an object of every property for `all`)",
                "property_type": "the property code",
                "input": "the SMILES as sent",
                "unit": "unit of the value",
                "in_reliable_range": "whether the value is inside the reliable range of /acceptable_ranges",
            },
            "computation_time_ms": "time the model took, in milliseconds",
            "error_message": "null, or what went wrong and where in the SMILES",
        }),
        notes: vec![
            "each example's expected values are documented reference values (PubChem, RDKit)"
                .into(),
            "the model checks itself with these examples before /health answers ok".into(),
            format!("properties: {}", crate::properties::codes().join(", ")),
        ],
    }
}

/// The `data` of the request an example stands for (its SMILES, every property).
pub fn example_data(example: &Example) -> Map<String, Value> {
    let mut data = Map::new();
    if let Some(s) = example.input.get("smiles") {
        data.insert("text".into(), s.clone());
    }
    data.insert("property".into(), json!("all"));
    data
}
