//! The manifest parsed and checked: the repository's own, and every problem at once.

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

const DIGITS: &str = include_str!("../../../models/digits/model.toml");

#[test]
fn the_picture_models_manifest_parses() {
    let m = Manifest::parse(DIGITS).unwrap();
    let Input::Image { image } = &m.input else {
        panic!("digits takes pictures");
    };
    assert_eq!(image.shape(), [1, 8, 8]);
    assert!(m.files().contains(&(
        "applicability_domain.training_features",
        "training_features.f32"
    )));
}

/// Every mistake of `[input.image]`, `[input.audio]` and their domain, in one answer.
#[test]
fn every_problem_of_a_picture_or_sound_section_comes_at_once() {
    let huge = DIGITS
        .replacen("width = 8\n", "width = 4096\n", 1)
        .replacen("height = 8\n", "height = 4096\n", 1);
    let all = Manifest::parse(&huge).unwrap_err();
    assert!(all.contains("16777216 values"), "{all}");
    let broken = DIGITS
        .replacen("width = 8\n", "width = 0\n", 1)
        .replacen("scale = 16.0\n", "scale = 16.0\nstd = [1.0, 0.0]\n", 1)
        .replacen(
            "\n[applicability_domain]\n",
            "\n[applicability_domain]\nmin_similarity = 0.5\n",
            1,
        );
    let all = Manifest::parse(&broken).unwrap_err();
    for says in [
        "input.image: width and height",
        "input.image.std: give one value, or one per channel (1), not 2",
        "input.image.std: must not be 0",
        "applicability_domain: fingerprints, min_similarity",
    ] {
        assert!(all.contains(says), "{says}: {all}");
    }
    // The digits manifest with its [input] tables swapped for a broken sound section.
    let (head, rest) = DIGITS.split_once("[input]\n").unwrap();
    let tail = &rest[rest.find("\n[output]").unwrap()..];
    let audio = format!(
        "{head}[input]\ntype = \"audio\"\n\n[input.audio]\nsample_rate = 500\nseconds = 0.01\n\
         features = \"log_mel\"\ntraining_data = {{}}\n\n[input.audio.log_mel]\nmels = 0\n\
         window = 400\nhop = 800\nfmax = 9000.0\n{tail}"
    );
    let all = Manifest::parse_all(&audio).unwrap_err().join("\n");
    for says in [
        "input.audio.sample_rate",
        "input.audio.log_mel.mels",
        "input.audio.log_mel.hop",
        "input.audio.log_mel.window",
        "fmax",
        "test_examples.examples[0]",
    ] {
        assert!(all.contains(says), "{says}: {all}");
    }
}
