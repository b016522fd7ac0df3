//! Reading `model.toml`: the TOML read once, then each section (and each property range and
//! test example) on its own, so every problem is found in one pass; then what types alone
//! cannot say ([`Manifest::check`]).

use crate::*;

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
const SECTIONS: [(&str, bool); 10] = [
    ("info", true),
    ("citation", true),
    ("capability", true),
    ("input", true),
    ("output", true),
    ("onnx", false),
    ("acceptable_ranges", true),
    ("applicability_domain", false),
    ("test_examples", true),
    ("network", false),
];

/// Deserializes one section (or entry) from its TOML value; the error says where.
fn section<T: serde::de::DeserializeOwned>(value: &toml::Value, at: &str) -> Result<T, String> {
    // Its display names the key within the section (`... in \`training_samples\``).
    value.clone().try_into().map_err(|e: toml::de::Error| {
        let why = e.to_string();
        let why: Vec<&str> = why
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        format!("[{at}]: {}", why.join(" "))
    })
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
        // Each plain section on its own (a missing required one is reported above).
        fn problem<T: serde::de::DeserializeOwned>(t: &toml::Table, at: &str) -> Option<String> {
            t.get(at).and_then(|v| section::<T>(v, at).err())
        }
        problems.extend(
            [
                problem::<ModelInfo>(&table, "info"),
                problem::<Citation>(&table, "citation"),
                problem::<CapabilityText>(&table, "capability"),
                problem::<Input>(&table, "input"),
                problem::<Output>(&table, "output"),
                problem::<OnnxFile>(&table, "onnx"),
                problem::<Domain>(&table, "applicability_domain"),
                problem::<EvidenceSpec>(&table, "evidence"),
                problem::<Network>(&table, "network"),
            ]
            .into_iter()
            .flatten(),
        );
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
        if let Some(f) = &self.applicability_domain.training_features {
            files.push(("applicability_domain.training_features", f));
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
            Input::Tabular {
                features,
                categories,
            } => {
                if features.is_empty() {
                    problems.push("input.features must name at least one feature".into());
                }
                for (name, values) in categories {
                    if !features.contains(name) {
                        problems.push(format!(
                            "input.categories.{name}: not one of input.features"
                        ));
                    } else if values.is_empty() {
                        problems.push(format!(
                            "input.categories.{name}: list the values seen in training"
                        ));
                    }
                    if d.feature_ranges.contains_key(name) {
                        problems.push(format!(
                            "applicability_domain.feature_ranges.{name}: a category has no \
                             numeric range (input.categories lists its values)"
                        ));
                    }
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
            Input::Image { image } => {
                problems.extend(self.media_problems(image.problems(), "image"));
            }
            Input::Audio { audio } => {
                problems.extend(self.media_problems(audio.problems(), "audio"));
            }
        }
        if !matches!(self.input, Input::Image { .. } | Input::Audio { .. })
            && (d.training_features.is_some() || d.max_distance.is_some())
        {
            problems.push(
                "applicability_domain.training_features and max_distance are for image and \
                 audio input"
                    .into(),
            );
        }
        problems.extend(self.range_keys_problems());
        problems
    }

    /// `[input.image]` or `[input.audio]`, the domain and the examples of such a model.
    fn media_problems(&self, spec: Vec<String>, field: &str) -> Vec<String> {
        let mut problems = spec;
        let d = &self.applicability_domain;
        if d.training_features.is_some() != d.max_distance.is_some() {
            problems.push(
                "applicability_domain: give both training_features and max_distance, or \
                 neither"
                    .into(),
            );
        }
        if let Some(m) = d.max_distance
            && !(m.is_finite() && m >= 0.0)
        {
            problems.push("applicability_domain.max_distance must be a number >= 0".into());
        }
        if d.fingerprints.is_some()
            || d.min_similarity.is_some()
            || !d.descriptor_ranges.is_empty()
            || !d.feature_ranges.is_empty()
        {
            problems.push(format!(
                "applicability_domain: fingerprints, min_similarity, descriptor_ranges and \
                 feature_ranges are for text and tabular input; an {field} model's domain is \
                 training_features and max_distance"
            ));
        }
        let url = format!("{field}_url");
        for (i, e) in self.test_examples.examples.iter().enumerate() {
            if !e.input.contains_key(field) && !e.input.contains_key(&url) {
                problems.push(format!(
                    "test_examples.examples[{i}] (`{}`) needs an {field} field (base64 of the \
                     file) or {url}",
                    e.name
                ));
            }
        }
        problems
    }

    /// `acceptable_ranges.property_ranges` describes the model's output, or its inputs (a
    /// feature's or descriptor's range): a key naming neither is a mistake (a renamed output),
    /// which would otherwise be published as a range of nothing.
    fn range_keys_problems(&self) -> Vec<String> {
        let output = match &self.output {
            Output::Regression { property, .. } | Output::Classification { property, .. } => {
                property
            }
        };
        let inputs: Vec<&String> = match &self.input {
            Input::Text { featurizer, .. } => featurizer.descriptors.iter().collect(),
            Input::Tabular { features, .. } => features.iter().collect(),
            Input::Image { .. } | Input::Audio { .. } => Vec::new(),
        };
        self.acceptable_ranges
            .property_ranges
            .keys()
            .filter(|k| *k != output && !inputs.contains(k))
            .map(|k| {
                format!(
                    "acceptable_ranges.property_ranges.{k}: names no output or input of the \
                     model (its output is output.property = `{output}`; an input's range is \
                     keyed by the feature's name)"
                )
            })
            .collect()
    }
}
