//! A [`Plan`] as `model.toml` text, written by hand (not serialized) so that the comments can
//! say what to edit next to the fields, and every number keeps its full precision: a float is
//! written as the shortest text that parses back to the same f64 (Rust's `{:?}`), never
//! rounded for display. Every text that comes from the user (a file or column name, a
//! category, a label) is written through [`string`] or [`key`], in a comment too, so that
//! no name, whatever it holds (a newline, a quote, a backslash), writes TOML of its own.

use super::plan::{Cell, ExamplePlan, Feature, Kind, OutputPlan, Plan, Stats};
use std::fmt::Write;

/// What the text says of its origin.
pub struct Origin<'a> {
    pub name: &'a str,
    pub onnx_file: &'a str,
    pub training_file: &'a str,
}

/// `v` as a TOML float that parses back to exactly `v` (`1.0`, `0.00020612`, `1e-7`).
pub fn float(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        // Debug is the shortest round-trip text, always with a `.` or an exponent (Display
        // writes 1e20 as 100000000000000000000, which TOML reads as an integer too large).
        format!("{v:?}")
    }
}

/// `s` as a TOML basic string. JSON's escapes are TOML's, but for DEL, which TOML wants
/// escaped and JSON leaves as it is.
pub fn string(s: &str) -> String {
    serde_json::to_string(s)
        .expect("a string serializes")
        .replace('\u{7f}', "\\u007F")
}

/// `k` as a TOML key: bare where TOML allows it, quoted otherwise.
pub fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare { k.to_owned() } else { string(k) }
}

fn strings(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| string(s)).collect();
    format!("[{}]", quoted.join(", "))
}

fn stats(s: &Stats) -> String {
    format!(
        "{{ min = {}, max = {}, mean = {} }}",
        float(s.min),
        float(s.max),
        float(s.mean)
    )
}

/// The whole `model.toml`.
pub fn manifest(plan: &Plan, origin: &Origin<'_>) -> String {
    let mut t = String::new();
    let name = origin.name;
    let property = match &plan.output {
        OutputPlan::Regression { property, .. } | OutputPlan::Classification { property, .. } => {
            property.as_str()
        }
    };
    // The names in the comment are quoted strings: a newline in one stays `\n`.
    let _ = writeln!(
        t,
        "# model.toml of {}, written by `runtime-host model init` from {} and {}.\n\
         # Edit every value that says \"edit me\" (what the model is, its licence, citation and\n\
         # units), then run `runtime-host model check` on this directory. The features, their\n\
         # training ranges, the labels and the test examples come from the graph and the data:\n\
         # they are exact (full precision); change them only with the model.\n",
        string(name),
        string(origin.onnx_file),
        string(origin.training_file)
    );
    let _ = writeln!(
        t,
        "[info]\nname = {}\ndescription = \"edit me: what the model predicts, from what\"\n\
         license = \"edit me: the model's licence (e.g. MIT)\"\n\
         citation = \"edit me: the paper or data set to cite, in one line\"\n\
         maintainer = \"edit me: who answers for the model (e.g. you@example.org)\"\n",
        string(name)
    );
    // A BibTeX key and title of the name's letters and digits (a brace in it would end
    // the entry).
    let bib = identifier(name);
    let _ = writeln!(
        t,
        "[citation]\npaper_citation = \"edit me: the full reference of the paper or data set\"\n\
         software_bibtex = {}\n",
        string(&format!(
            "@software{{{bib}, title = {{{bib}}}, note = {{edit me}}}}"
        ))
    );
    let capability = identifier(property).to_ascii_lowercase();
    let _ = writeln!(
        t,
        "[capability]\nname = {}\ndescription = \"edit me: what the model answers, for whom\"\n",
        string(&format!("predict_{capability}"))
    );
    input(&mut t, &plan.features);
    output(&mut t, &plan.output);
    if origin.onnx_file != "model.onnx" {
        let _ = writeln!(t, "[onnx]\nfile = {}\n", string(origin.onnx_file));
    }
    ranges(&mut t, plan, property, origin);
    domain(&mut t, &plan.features);
    examples(&mut t, &plan.examples, &plan.features);
    t
}

/// `s` with every character but ASCII letters and digits made `_`.
fn identifier(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

fn input(t: &mut String, features: &[Feature]) {
    let names: Vec<String> = features.iter().map(|f| f.name.clone()).collect();
    let _ = writeln!(t, "# The graph's inputs, in its order.");
    let _ = writeln!(
        t,
        "[input]\ntype = \"tabular\"\nfeatures = {}",
        strings(&names)
    );
    let categories: Vec<String> = features
        .iter()
        .filter_map(|f| match &f.kind {
            Kind::Category(values) => Some(format!("{} = {}", key(&f.name), strings(values))),
            Kind::Number(_) => None,
        })
        .collect();
    if !categories.is_empty() {
        let _ = writeln!(t, "# The text features, with the values seen in training.");
        let _ = writeln!(t, "categories = {{ {} }}", categories.join(", "));
    }
    t.push('\n');
}

fn output(t: &mut String, output: &OutputPlan) {
    match output {
        OutputPlan::Regression { property, .. } => {
            let _ = writeln!(
                t,
                "[output]\nkind = \"regression\"\nproperty = {}\nunit = {}\n",
                string(property),
                string(&format!("edit me: the unit of {property}"))
            );
        }
        OutputPlan::Classification {
            property,
            labels,
            from,
            scores,
        } => {
            let _ = writeln!(
                t,
                "# The labels, in the graph's order (from {from}).\n[output]\nkind = \
                 \"classification\"\nproperty = {}\nlabels = {}",
                string(property),
                strings(labels)
            );
            if *scores {
                let _ = writeln!(
                    t,
                    "# The graph's classifier answers decision scores per label, not \
                     probabilities\n# (an SVC without probability=True, a LinearSVC, a \
                     RidgeClassifier).\nvalues = \"decision_scores\""
                );
            }
            let _ = writeln!(t);
        }
    }
}

fn ranges(t: &mut String, plan: &Plan, property: &str, origin: &Origin<'_>) {
    let n = plan.training_rows;
    let _ = writeln!(
        t,
        "[acceptable_ranges]\nversion = \"1.0.0\"\ndescription = {}",
        string(&format!(
            "edit me: what the model was trained on ({n} rows of {}).",
            origin.training_file
        ))
    );
    let _ = writeln!(
        t,
        "chemical_scope = {{ supported_features = [\"edit me: the inputs the model takes\"], \
         limitations = [\"edit me: where the model should not be used\"] }}"
    );
    let _ = writeln!(
        t,
        "usage_recommendations = [{}]",
        string(&format!(
            "Send data.features as an object of the {} named features, or as an array in their order.",
            plan.features.len()
        ))
    );
    match &plan.output {
        OutputPlan::Classification { .. } => {
            let _ = writeln!(t, "property_ranges = {{}}\n");
        }
        OutputPlan::Regression { target, .. } => {
            let _ = writeln!(
                t,
                "\n# The target's range in the training data; the reliable range is that range\n\
                 # until a validation says otherwise (edit me, with the metrics, once measured).\n\
                 [acceptable_ranges.property_ranges.{}]\nproperty_name = {}\n\
                 unit = \"edit me: the unit\"\ntraining_range = {}\n\
                 reliable_range = {{ min = {}, max = {}, note = \"the training range\" }}\n\
                 training_samples = {}\n\
                 validation_metrics = {{ R2 = \"not measured\", typical_error = \"not measured\" }}\n",
                key(property),
                string(property),
                stats(target),
                float(target.min),
                float(target.max),
                target.count
            );
        }
    }
}

fn domain(t: &mut String, features: &[Feature]) {
    let numbers: Vec<String> = features
        .iter()
        .filter_map(|f| match &f.kind {
            Kind::Number(Some(s)) => Some(format!("{} = {}", key(&f.name), stats(s))),
            _ => None,
        })
        .collect();
    if numbers.is_empty() {
        return;
    }
    let _ = writeln!(
        t,
        "# Each number feature's training range: a value outside is answered out of domain.\n\
         [applicability_domain.feature_ranges]\n{}\n",
        numbers.join("\n")
    );
}

fn examples(t: &mut String, examples: &[ExamplePlan], features: &[Feature]) {
    let _ = writeln!(
        t,
        "# Rows of the data, run by /health before the model takes traffic.\n[test_examples]\n\
         notes = [\"Rows of the model's data, as `model init` took them (see each description).\"]\n"
    );
    for e in examples {
        let cells: Vec<String> = features
            .iter()
            .zip(&e.values)
            .map(|(f, v)| {
                let v = match v {
                    Cell::Number(x) => float(*x),
                    Cell::Text(s) => string(s),
                };
                format!("{} = {v}", key(&f.name))
            })
            .collect();
        let _ = writeln!(
            t,
            "[[test_examples.examples]]\nname = {}\ndescription = {}\ncategory = {}\n\
             features = {{ {} }}\n",
            string(&e.name),
            string(&e.description),
            string(&e.category),
            cells.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_round_trip_through_toml_exactly() {
        for v in [
            0.00020612_f64,
            0.1,
            1.0,
            -0.0,
            1e20,
            1e-7,
            5.843333333333335,
            f64::MAX,
            f64::MIN_POSITIVE,
        ] {
            let text = format!("v = {}", float(v));
            let table: toml::Table =
                toml::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let back = table["v"]
                .as_float()
                .unwrap_or_else(|| panic!("{text} is a float"));
            assert_eq!(back.to_bits(), v.to_bits(), "{text}");
        }
    }

    #[test]
    fn keys_and_strings_are_quoted_where_toml_needs_it() {
        assert_eq!(key("sepal_width-cm"), "sepal_width-cm");
        assert_eq!(key("width (cm)"), "\"width (cm)\"");
        let odd = "a \"b\"\\ c\u{7f}\n";
        let text = format!("{} = {}", key(odd), string(odd));
        let table: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(table[odd].as_str(), Some(odd));
    }
}
