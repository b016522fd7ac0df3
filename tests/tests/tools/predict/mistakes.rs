//! Mistakes get the message that helps (issue 46 §4): a wrong `--data` leaves no output
//! behind (and, with `--force`, the old one in place), so the corrected command just runs;
//! after `--resume` the summary accounts for the whole file; a `--url` naming an endpoint
//! says to drop it.

use super::{predict, s, stderr};
use e2e_tests::{component, temp_dir};

/// Three molecules, the second one not a molecule.
fn library(path: &std::path::Path, extra: &[&str]) {
    let mut text = String::from("CCO\tethanol\nXX1\tbroken\nc1ccccc1\tbenzene\n");
    for line in extra {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

/// `predict` of `dir`'s lib.smi through molprop into lib.csv, with `extra` flags.
fn run_in(dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let (input, output) = (dir.join("lib.smi"), dir.join("lib.csv"));
    let molprop = component("molprop");
    let mut args = vec![s(&input), "--model", s(&molprop), "-o", s(&output)];
    args.extend_from_slice(&["--data-dir", s(dir), "--quiet"]);
    args.extend_from_slice(extra);
    predict(&args)
}

#[test]
fn a_wrong_data_field_leaves_no_output_and_the_fixed_run_just_runs() {
    let dir = temp_dir();
    let (input, output) = (dir.path().join("lib.smi"), dir.path().join("lib.csv"));
    library(&input, &[]);
    let run = |extra: &[&str]| run_in(dir.path(), extra);
    let bad = run(&["--data", "property=colour"]);
    assert!(!bad.status.success());
    let said = stderr(&bad);
    assert!(said.contains("nothing was written"), "{said}");
    assert!(
        !said.contains("--resume"),
        "no --resume of a run that wrote nothing: {said}"
    );
    assert!(!output.exists(), "no output file after a bad first answer");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // The corrected command, as it was (no --force): it runs.
    let good = run(&["--data", "property=logp"]);
    assert!(good.status.success(), "{}", stderr(&good));
    let written = std::fs::read_to_string(&output).unwrap();
    assert_eq!(written.lines().count(), 4, "{written}");

    // --force with a wrong field again: the good output stays as it was.
    let again = run(&["--data", "property=colour", "--force"]);
    assert!(!again.status.success());
    assert_eq!(std::fs::read_to_string(&output).unwrap(), written);
}

#[test]
fn the_summary_after_resume_counts_the_whole_file() {
    let dir = temp_dir();
    let input = dir.path().join("lib.smi");
    library(&input, &[]);
    let run = |extra: &[&str]| run_in(dir.path(), extra);
    assert!(run(&[]).status.success());
    // Two more rows, one of them broken: the resumed run writes those two.
    library(&input, &["C1CC\tbroken-too", "CC(=O)O\tacetic acid"]);
    let resumed = run(&["--resume"]);
    let said = String::from_utf8_lossy(&resumed.stdout).into_owned() + &stderr(&resumed);
    assert!(resumed.status.success(), "{said}");
    assert!(said.contains("written:  5 of 5 rows"), "{said}");
    assert!(
        said.contains("failed:   2"),
        "both broken rows, the earlier one too: {said}"
    );
    assert!(said.contains("after 3 rows of an earlier run"), "{said}");
}

#[test]
fn a_url_naming_an_endpoint_says_to_drop_it() {
    let dir = temp_dir();
    let input = dir.path().join("lib.smi");
    library(&input, &[]);
    for endpoint in ["/predict", "/predict/", "/capabilities"] {
        let url = format!("http://127.0.0.1:9/models/molprop{endpoint}");
        let out = predict(&[s(&input), "--url", &url]);
        assert!(!out.status.success());
        let said = stderr(&out);
        assert!(
            said.contains("--url http://127.0.0.1:9/models/molprop"),
            "{said}"
        );
        assert!(said.contains("without `/"), "{said}");
    }
}
