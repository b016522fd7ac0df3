//! `model.toml`: everything the specification asks a model to say about itself, plus how its
//! ONNX graph is fed and read. Sections named after an endpoint hold that endpoint's record as
//! the specification spells it (`[info]`, `[citation]`, `[acceptable_ranges]`,
//! `[test_examples]`); the rest says how to build the input (`[input]`), what the output means
//! (`[output]`) and when a prediction is trusted (`[applicability_domain]`).
//!
//! Parsing is strict: a missing field or a field of the wrong type is an error naming the
//! field and its line, and so is an unknown field in the sections defined here (the endpoint
//! records keep their wire types, which allow further keys), so a model directory fails before
//! it serves.

use edge_api::model::{ChemicalScope, Citation, Example, ModelInfo, PropertyRange};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub info: ModelInfo,
    pub citation: Citation,
    pub capability: CapabilityText,
    pub input: Input,
    pub output: Output,
    #[serde(default)]
    pub onnx: OnnxFile,
    pub acceptable_ranges: RangesText,
    #[serde(default)]
    pub applicability_domain: Domain,
    pub test_examples: ExamplesText,
    #[serde(default)]
    pub evidence: Option<EvidenceSpec>,
}

/// `[evidence]`: the held-out test set the model is judged on (`GET /evidence`, the
/// console's plots). A tab-separated file with a header: the input (a `smiles` column, or
/// one column per tabular feature), the measured value or true label, optionally a name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceSpec {
    pub test_set: String,
    /// Says what the test set is (source, size, how it was held out).
    pub description: String,
    /// The column of measured values (regression) or true labels (classification).
    pub measured: String,
    /// The column naming each row; rows are numbered without one.
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilityText {
    pub name: String,
    pub description: String,
}

/// What a request's `data` holds and how it becomes the graph's input vector.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum Input {
    /// `data.text` (or `data.smiles`): a SMILES, featurized by `chem`.
    Text {
        featurizer: FeaturizerSpec,
        #[serde(default = "default_max_tokens")]
        max_tokens: usize,
    },
    /// `data.features`: an object of the named features, or an array in this order.
    Tabular { features: Vec<String> },
}

fn default_max_tokens() -> usize {
    1024
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeaturizerSpec {
    #[serde(default = "default_radius")]
    pub morgan_radius: u32,
    /// 0 leaves the fingerprint out.
    #[serde(default)]
    pub morgan_bits: usize,
    #[serde(default)]
    pub descriptors: Vec<String>,
}

fn default_radius() -> u32 {
    2
}

/// What the graph's output means.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Output {
    /// The graph's first output holds one number per input row.
    Regression { property: String, unit: String },
    /// The graph's floating-point output of one column per label holds class probabilities
    /// (skl2onnx with `zipmap` off), in the order of `labels`.
    Classification {
        property: String,
        #[serde(default)]
        unit: String,
        labels: Vec<String>,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnnxFile {
    #[serde(default = "default_onnx_file")]
    pub file: String,
}

impl Default for OnnxFile {
    fn default() -> Self {
        Self {
            file: default_onnx_file(),
        }
    }
}

fn default_onnx_file() -> String {
    "model.onnx".into()
}

/// `/acceptable_ranges` without the fields the component fills in (`model`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangesText {
    pub version: String,
    pub description: String,
    pub property_ranges: BTreeMap<String, PropertyRange>,
    pub chemical_scope: ChemicalScope,
    pub usage_recommendations: Vec<String>,
}

/// When a prediction is inside the model's applicability domain.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Domain {
    /// Packed training fingerprints (`morgan_bits / 8` bytes per molecule, bit `i` in byte
    /// `i / 8` at position `i % 8`), for the nearest-neighbour similarity.
    pub fingerprints: Option<String>,
    /// Nearest training molecule below this Tanimoto similarity: outside the domain.
    pub min_similarity: Option<f64>,
    /// Training ranges of descriptors (text input); a value outside: outside the domain.
    #[serde(default)]
    pub descriptor_ranges: BTreeMap<String, Range>,
    /// Training ranges of features (tabular input).
    #[serde(default)]
    pub feature_ranges: BTreeMap<String, Range>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    pub min: f64,
    pub max: f64,
    /// Documents the training data; the domain rule uses min and max only.
    #[serde(default)]
    #[allow(dead_code)]
    pub mean: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExamplesText {
    pub examples: Vec<Example>,
    #[serde(default)]
    pub notes: Vec<String>,
}

/// A TOML error as `line L, column C: why`, without the line itself that the error's own
/// text quotes: the file is untrusted (a `model.toml` linked to `/etc/shadow` once put that
/// file's first line in the host's log).
fn where_and_why(text: &str, e: &toml::de::Error) -> String {
    let Some(span) = e.span() else {
        return e.message().to_owned();
    };
    let before = text.get(..span.start).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.len() - start + 1;
    // The key the line sets, if it is a plain one: a field name, never a value.
    let key = text[start..]
        .lines()
        .next()
        .and_then(|l| l.split_once('='))
        .map(|(k, _)| k.trim())
        .filter(|k| {
            !k.is_empty()
                && k.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
        });
    match key {
        Some(key) => format!("line {line}, column {column} (`{key}`): {}", e.message()),
        None => format!("line {line}, column {column}: {}", e.message()),
    }
}

/// The manifest's sections: name, and whether it must be there.
const SECTIONS: [(&str, bool); 9] = [
    ("info", true),
    ("citation", true),
    ("capability", true),
    ("input", true),
    ("output", true),
    ("onnx", false),
    ("acceptable_ranges", true),
    ("applicability_domain", false),
    ("test_examples", true),
];

/// Deserializes one section (or entry) from its TOML value; the error says where.
fn section<T: serde::de::DeserializeOwned>(value: &toml::Value, at: &str) -> Result<T, String> {
    value
        .clone()
        .try_into()
        .map_err(|e: toml::de::Error| format!("[{at}]: {}", e.message().trim_end_matches('\n')))
}

/// Every problem of a section's entries, each entry deserialized alone (so one bad property
/// range does not hide the next).
fn entries<T: serde::de::DeserializeOwned>(value: Option<&toml::Value>, at: &str) -> Vec<String> {
    let mut problems = Vec::new();
    match value {
        Some(toml::Value::Table(t)) => {
            for (k, v) in t {
                problems.extend(section::<T>(v, &format!("{at}.{k}")).err());
            }
        }
        Some(toml::Value::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                problems.extend(section::<T>(v, &format!("{at}[{i}]")).err());
            }
        }
        _ => {}
    }
    problems
}

impl Manifest {
    /// Parses `text`, then checks what types alone cannot say; the error lists every
    /// problem found, one per line, each naming the field.
    pub fn parse(text: &str) -> Result<Self, String> {
        Self::parse_all(text).map_err(|problems| problems.join("\n"))
    }

    /// [`Manifest::parse`], every problem apart: a wrong section does not hide the next
    /// one, nor does a bad entry of a table or list its neighbours. (Within one record
    /// serde stops at the first problem.)
    pub fn parse_all(text: &str) -> Result<Self, Vec<String>> {
        let table: toml::Table = toml::from_str(text).map_err(|e| vec![where_and_why(text, &e)])?;
        let mut problems = Vec::new();
        for key in table.keys() {
            if !SECTIONS.iter().any(|(name, _)| name == key) && key != "evidence" {
                let known: Vec<&str> = SECTIONS.iter().map(|(n, _)| *n).collect();
                problems.push(format!(
                    "[{key}]: not a section of model.toml (they are {}, evidence)",
                    known.join(", ")
                ));
            }
        }
        for (name, required) in SECTIONS {
            if required && !table.contains_key(name) {
                problems.push(format!("[{name}]: missing"));
            }
        }
        let get = |k: &str| table.get(k);
        if let Some(v) = get("info") {
            problems.extend(section::<ModelInfo>(v, "info").err());
        }
        if let Some(v) = get("citation") {
            problems.extend(section::<Citation>(v, "citation").err());
        }
        if let Some(v) = get("capability") {
            problems.extend(section::<CapabilityText>(v, "capability").err());
        }
        if let Some(v) = get("input") {
            problems.extend(section::<Input>(v, "input").err());
        }
        if let Some(v) = get("output") {
            problems.extend(section::<Output>(v, "output").err());
        }
        if let Some(v) = get("onnx") {
            problems.extend(section::<OnnxFile>(v, "onnx").err());
        }
        if let Some(v) = get("applicability_domain") {
            problems.extend(section::<Domain>(v, "applicability_domain").err());
        }
        if let Some(v) = get("evidence") {
            problems.extend(section::<EvidenceSpec>(v, "evidence").err());
        }
        if let Some(v) = get("acceptable_ranges") {
            let ranges = v.get("property_ranges");
            let mut problems_here =
                entries::<PropertyRange>(ranges, "acceptable_ranges.property_ranges");
            if problems_here.is_empty() {
                problems_here.extend(section::<RangesText>(v, "acceptable_ranges").err());
            }
            problems.extend(problems_here);
        }
        if let Some(v) = get("test_examples") {
            let examples = v.get("examples");
            let mut problems_here = entries::<Example>(examples, "test_examples.examples");
            if problems_here.is_empty() {
                problems_here.extend(section::<ExamplesText>(v, "test_examples").err());
            }
            problems.extend(problems_here);
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        let m: Manifest = toml::from_str(text).map_err(|e| vec![where_and_why(text, &e)])?;
        let problems = m.check();
        if problems.is_empty() {
            Ok(m)
        } else {
            Err(problems)
        }
    }

    /// The ONNX graph's file and the other files the manifest names (test set,
    /// fingerprints), relative to the model directory.
    pub fn files(&self) -> Vec<(&'static str, &str)> {
        let mut files = vec![("onnx.file", self.onnx.file.as_str())];
        if let Some(f) = &self.applicability_domain.fingerprints {
            files.push(("applicability_domain.fingerprints", f));
        }
        if let Some(e) = &self.evidence {
            files.push(("evidence.test_set", &e.test_set));
        }
        files
    }

    /// What types alone cannot say, every problem.
    fn check(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.info.name.trim().is_empty() {
            problems.push("info.name must not be empty".into());
        }
        if self.test_examples.examples.is_empty() {
            problems.push(
                "test_examples.examples must hold at least one example: /health runs \
                        them before the model is ready"
                    .into(),
            );
        }
        if let Output::Classification { labels, .. } = &self.output
            && labels.len() < 2
        {
            problems.push("output.labels must name at least two classes".into());
        }
        let d = &self.applicability_domain;
        match &self.input {
            Input::Text { featurizer, .. } => {
                if !featurizer.morgan_bits.is_multiple_of(8) {
                    problems.push("input.featurizer.morgan_bits must be a multiple of 8".into());
                }
                if d.fingerprints.is_some() != d.min_similarity.is_some() {
                    problems.push(
                        "applicability_domain: give both fingerprints and \
                                min_similarity, or neither"
                            .into(),
                    );
                }
                if d.fingerprints.is_some() && featurizer.morgan_bits == 0 {
                    problems.push(
                        "applicability_domain.fingerprints needs \
                                input.featurizer.morgan_bits"
                            .into(),
                    );
                }
                if let Some(s) = d.min_similarity
                    && !(0.0..=1.0).contains(&s)
                {
                    problems.push("applicability_domain.min_similarity must be within 0..1".into());
                }
                if let Some(k) = d
                    .descriptor_ranges
                    .keys()
                    .find(|k| !featurizer.descriptors.contains(k))
                {
                    problems.push(format!(
                        "applicability_domain.descriptor_ranges.{k}: not one of \
                         input.featurizer.descriptors"
                    ));
                }
                for (i, e) in self.test_examples.examples.iter().enumerate() {
                    if !e.input.contains_key("smiles") && !e.input.contains_key("text") {
                        problems.push(format!(
                            "test_examples.examples[{i}] (`{}`) needs a smiles field",
                            e.name
                        ));
                    }
                }
            }
            Input::Tabular { features } => {
                if features.is_empty() {
                    problems.push("input.features must name at least one feature".into());
                }
                if let Some(k) = d.feature_ranges.keys().find(|k| !features.contains(k)) {
                    problems.push(format!(
                        "applicability_domain.feature_ranges.{k}: not one of input.features"
                    ));
                }
                for (i, e) in self.test_examples.examples.iter().enumerate() {
                    if !e.input.contains_key("features") {
                        problems.push(format!(
                            "test_examples.examples[{i}] (`{}`) needs a features field",
                            e.name
                        ));
                    }
                }
            }
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IRIS: &str = include_str!("../../../models/iris/model.toml");

    /// `text` without the lines `drop` says (whole lines, trimmed, compared exactly) and the
    /// table `[section]` with its lines.
    fn without(text: &str, section: &str, drop: &[&str]) -> String {
        let mut out = String::new();
        let mut skipping = false;
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with('[') {
                skipping = t == format!("[{section}]");
            }
            if skipping || drop.iter().any(|d| t.starts_with(d)) {
                continue;
            }
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    #[test]
    fn the_repositorys_manifest_parses() {
        let m = Manifest::parse(IRIS).unwrap();
        assert_eq!(m.info.name, "iris");
        assert_eq!(m.files()[0], ("onnx.file", "model.onnx"));
    }

    /// The three problems a newcomer met one at a time, each after a 15 s recompile, come
    /// in one answer.
    #[test]
    fn every_problem_comes_at_once() {
        let mut text = without(IRIS, "citation", &["maintainer ="]);
        // One property range without its validation metrics.
        text = text.replacen(
            "[acceptable_ranges.property_ranges.sepal_width_cm.validation_metrics]",
            "[acceptable_ranges.property_ranges.sepal_width_cm.not_metrics]",
            1,
        );
        let problems = Manifest::parse_all(&text).unwrap_err();
        let all = problems.join("\n");
        assert!(all.contains("[citation]: missing"), "{all}");
        assert!(
            all.contains("[info]") && all.contains("maintainer"),
            "{all}"
        );
        assert!(
            all.contains("sepal_width_cm") && all.contains("validation_metrics"),
            "{all}"
        );
        assert_eq!(problems.len(), 3, "{all}");
    }

    #[test]
    fn a_syntax_error_names_its_line_and_key() {
        let e = Manifest::parse("[info]\nname = \"x\"\ndescription = oops\n").unwrap_err();
        assert!(e.starts_with("line 3"), "{e}");
        assert!(e.contains("`description`"), "{e}");
    }

    #[test]
    fn unknown_sections_and_checks_beyond_types_are_all_listed() {
        let text = format!("{IRIS}\n[extras]\nx = 1\n");
        let all = Manifest::parse(&text).unwrap_err();
        assert!(all.contains("[extras]: not a section"), "{all}");
        let one_label = IRIS.replace(
            "labels = [\n    \"setosa\",\n    \"versicolor\",\n    \"virginica\",\n]",
            "labels = [\"setosa\"]",
        );
        let all = Manifest::parse(&one_label).unwrap_err();
        assert!(all.contains("at least two classes"), "{all}");
    }
}
