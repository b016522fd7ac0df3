//! The `featurize` CLI the training scripts call: one line per input, the same features the
//! served model computes, and errors that say which input failed and why.

use std::io::Write;
use std::process::{Command, Stdio};

fn featurize(args: &[&str], input: &str) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_featurize"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A CLI that refuses its arguments exits without reading stdin; the pipe it closed is
    // expected then, and its exit status and stderr still tell the story.
    let written = child.stdin.take().unwrap().write_all(input.as_bytes());
    if let Err(err) = written {
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "{err}");
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn one_line_per_input_with_bits_then_descriptors() {
    let args = [
        "--radius",
        "2",
        "--bits",
        "1024",
        "--descriptors",
        "heavy_atoms,logp",
    ];
    let (ok, out, _) = featurize(&args, "CCO\nC1CC\nc1ccccc1\n");
    assert!(ok);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3);

    let ethanol: Vec<&str> = lines[0].split('\t').collect();
    assert_eq!(ethanol[0], "ok");
    let mol = chem::smiles::parse("CCO").unwrap();
    let features = chem::features::Featurizer::new(
        Some(chem::fingerprint::Morgan {
            radius: 2,
            bits: 1024,
        }),
        &["heavy_atoms", "logp"],
    )
    .unwrap()
    .features(&mol);
    let bits: Vec<String> = features
        .fingerprint
        .unwrap()
        .on_bits()
        .map(|b| b.to_string())
        .collect();
    assert_eq!(
        ethanol[1],
        bits.join(","),
        "the same bits the component computes"
    );
    assert_eq!(ethanol[2], "3");
    assert_eq!(ethanol[3].parse::<f64>().unwrap(), features.descriptors[1]);

    assert!(lines[1].starts_with("error\t"), "{}", lines[1]);
    assert!(lines[1].contains("ring closure"), "{}", lines[1]);
    assert!(lines[2].starts_with("ok\t"));
}

#[test]
fn unknown_descriptor_is_refused_with_the_known_ones() {
    let (ok, _, err) = featurize(&["--descriptors", "colour"], "CCO\n");
    assert!(!ok);
    assert!(
        err.contains("`colour`") && err.contains("mol_weight"),
        "{err}"
    );
}
