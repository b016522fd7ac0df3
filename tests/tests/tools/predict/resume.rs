//! Ctrl-C in the middle of a library: what is written is a valid file, and `--resume`
//! finishes it without scoring a row twice.

use super::{
    csv_rows, echo_rows, header, predict, s, slow_echo_args, spawn_predict, stderr, wait_for_lines,
};
use e2e_tests::temp_dir;
use std::time::Duration;

#[test]
fn an_interrupted_run_leaves_a_valid_file_that_resume_completes() {
    let dir = temp_dir();
    let input = dir.path().join("rows.jsonl");
    echo_rows(&input, 200, 0);
    let output = dir.path().join("out.csv");
    let data_dir = s(dir.path()).to_owned();
    // Small batches, one at a time, so the run lasts long enough to interrupt.
    let args = |extra: &[&str]| -> Vec<String> {
        let fixed = ["--data-dir", &data_dir, "--progress-every", "1"];
        let mut v = slow_echo_args(&input, &output, &fixed);
        if !extra.contains(&"--batch-size") {
            v.extend(["--batch-size", "5", "--concurrency", "1"].map(String::from));
        }
        v.extend(extra.iter().map(|x| x.to_string()));
        v
    };
    let mut child = spawn_predict(&args(&[]));
    // Interrupt once some rows are written (each batch takes about 125 ms).
    wait_for_lines(&output, 40);
    e2e_tests::interrupt(&child);
    let status = e2e_tests::wait_for_exit(&mut child, Duration::from_secs(10)).expect("stopped");
    let err = stderr(&child.wait_with_output().unwrap());
    assert!(
        !status.success(),
        "an interrupted run is not a success: {err}"
    );
    assert!(
        err.contains("interrupted:") && err.contains("--resume"),
        "{err}"
    );
    // Not a terminal: plain progress lines.
    assert!(err.contains(" rows/s"), "{err}");
    let rows = csv_rows(&output);
    assert!(rows.len() >= 39 && rows.len() < 200, "{} rows", rows.len());
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(&row[0], format!("r{i}"));
    }
    // A second, harder stop may cut a line: --resume cuts it back.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&output)
        .unwrap();
    std::io::Write::write_all(&mut file, b"r999,{\"half").unwrap();
    drop(file);
    // Without --resume an existing output is not replaced.
    let refused = predict(&args(&[]).iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("--resume"),
        "{}",
        stderr(&refused)
    );

    let resumed = predict(
        &args(&["--resume", "--batch-size", "50", "--concurrency", "3"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let err = stderr(&resumed);
    assert!(resumed.status.success(), "{err}");
    assert!(
        err.contains(&format!("after {} rows of an earlier run", rows.len())),
        "{err}"
    );
    let all = csv_rows(&output);
    let head = header(&output);
    let value = head
        .iter()
        .position(|h| h == "echo.features.value")
        .unwrap_or_else(|| panic!("{head:?}"));
    assert_eq!(all.len(), 200);
    for (i, row) in all.iter().enumerate() {
        assert_eq!(&row[0], format!("r{i}"));
        assert_eq!(&row[value], i.to_string());
    }

    // A different input is not taken for this file's.
    echo_rows(&input, 200, 1000);
    let other = predict(
        &args(&["--resume"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(!other.status.success());
    assert!(
        stderr(&other).contains("another input"),
        "{}",
        stderr(&other)
    );
}
