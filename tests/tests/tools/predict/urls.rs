//! A table's column of picture URLs, fetched by the digits model from a server of the test
//! (allowed with `--allow-outbound`): bad URLs fail alone, and an interrupted run resumes
//! by URL without fetching any picture twice.

use super::media::digit_pictures;
use super::{
    assert_predictions, csv_rows, header, predict, s, spawn_predict, stderr, wait_for_lines,
};
use e2e_tests::served::Served;
use e2e_tests::{model_dir, temp_dir};
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// The digits examples served as `/d{i}.{ext}` for `i` in `0..n` (the examples in turn),
/// and a text file; returns the server and each picture's path and true digit.
fn serve_pictures(n: usize, delay: Duration) -> (Served, Vec<(String, String)>) {
    let pictures = digit_pictures();
    let mut files = HashMap::new();
    let mut listed = Vec::new();
    for i in 0..n {
        let (digit, bytes, ext) = &pictures[i % pictures.len()];
        let path = format!("/d{i:03}.{ext}");
        let kind = if *ext == "png" {
            "image/png"
        } else {
            "image/jpeg"
        };
        files.insert(path.clone(), (kind, bytes.clone()));
        listed.push((path, digit.clone()));
    }
    files.insert(
        "/notes.png".into(),
        ("image/png", b"not a picture".to_vec()),
    );
    (Served::start(files, delay), listed)
}

/// The arguments both tests start from: the digits model in process over the `image_url`
/// column of `table`, writing `output`.
fn url_table_args<'a>(
    table: &'a Path,
    model: &'a Path,
    data_dir: &'a Path,
    output: &'a Path,
) -> Vec<&'a str> {
    vec![
        s(table),
        "--url-column",
        "image_url",
        "--model",
        s(model),
        "--data-dir",
        s(data_dir),
        "-o",
        s(output),
    ]
}

#[test]
fn a_url_column_is_fetched_by_the_model_and_bad_urls_fail_alone() {
    let dir = temp_dir();
    let (server, pictures) = serve_pictures(8, Duration::ZERO);
    let mut text = String::from("name,image_url,note\n");
    let mut expected = Vec::new();
    for (i, (path, digit)) in pictures.iter().enumerate() {
        text.push_str(&format!("p{i},{},scanned\n", server.url(path)));
        expected.push((format!("p{i}"), Some(digit.clone())));
    }
    for (name, url) in [
        ("missing", server.url("/gone.png")),
        ("not-a-picture", server.url("/notes.png")),
        ("empty", String::new()),
        ("a-file", "file:///etc/passwd".to_owned()),
    ] {
        text.push_str(&format!("{name},{url},\n"));
        expected.push((name.to_owned(), None));
    }
    let table = dir.path().join("scans.csv");
    std::fs::write(&table, text).unwrap();
    let output = dir.path().join("out.csv");
    let model = model_dir("digits");
    let origin = server.origin();
    let run = |extra: &[&str]| {
        let mut args = url_table_args(&table, &model, dir.path(), &output);
        args.extend_from_slice(&["--batch-size", "3"]);
        args.extend_from_slice(extra);
        predict(&args)
    };
    let out = run(&["--allow-outbound", &origin]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("failed:   4"), "{err}");
    let head = header(&output);
    assert_eq!(&head[..3], ["id", "image_url", "prediction"], "{head:?}");
    let error = head.len() - 1;
    assert_predictions(&output, 2, &expected);
    let rows = csv_rows(&output);
    assert_eq!(&rows[10][error], "the URL cell is empty");
    assert!(
        rows[11][error].contains("not an http(s) URL"),
        "{:?}",
        rows[11]
    );
    // Each good picture fetched once; the file URL never reached anything.
    let hits = server.hits();
    for (path, _) in &pictures {
        assert_eq!(hits.get(path), Some(&1), "{path}: {hits:?}");
    }

    // Without --allow-outbound the model may fetch nothing: every URL fails, no run does.
    let hits_before: usize = server.hits().values().sum();
    let out = run(&["--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = csv_rows(&output);
    assert_eq!(rows.len(), expected.len());
    // A new file, its header from the model's documented fields (no result had any).
    let error = header(&output).len() - 1;
    for (row, (_, digit)) in rows.iter().zip(&expected) {
        // The refusal says how to allow the host.
        let refused = row[error].contains("--allow-outbound");
        assert!(
            refused || (digit.is_none() && !row[error].is_empty()),
            "{row:?}"
        );
    }
    assert_eq!(server.hits().values().sum::<usize>(), hits_before);
}

#[test]
fn an_interrupted_url_run_resumes_without_fetching_a_picture_twice() {
    let dir = temp_dir();
    // Each fetch 30 ms late, two URLs a request, one request at a time: long enough to stop.
    let (server, pictures) = serve_pictures(60, Duration::from_millis(30));
    let mut text = String::from("image_url\n");
    for (path, _) in &pictures {
        text.push_str(&format!("{}\n", server.url(path)));
    }
    let table = dir.path().join("urls.csv");
    std::fs::write(&table, text).unwrap();
    let output = dir.path().join("out.csv");
    let model = model_dir("digits");
    let origin = server.origin();
    let args = |extra: &[&str]| -> Vec<String> {
        let mut v = url_table_args(&table, &model, dir.path(), &output);
        v.extend_from_slice(&["--allow-outbound", &origin]);
        v.extend_from_slice(extra);
        v.into_iter().map(String::from).collect()
    };
    let mut child = spawn_predict(&args(&["--batch-size", "2", "--concurrency", "1"]));
    wait_for_lines(&output, 11);
    e2e_tests::interrupt(&child);
    let status = e2e_tests::wait_for_exit(&mut child, Duration::from_secs(20)).expect("stopped");
    let err = stderr(&child.wait_with_output().unwrap());
    assert!(!status.success(), "{err}");
    assert!(err.contains("--resume"), "{err}");
    let first = csv_rows(&output).len();
    assert!((10..60).contains(&first), "{first} rows");

    let out = predict(
        &args(&["--resume", "--batch-size", "16"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("after {first} rows of an earlier run")),
        "{err}"
    );
    let rows = csv_rows(&output);
    assert_eq!(rows.len(), 60);
    let hits = server.hits();
    for (row, (path, digit)) in rows.iter().zip(&pictures) {
        // Named by the URL (the table has no id column), in the table's order.
        assert_eq!(&row[0], &server.url(path));
        assert_eq!(&row[2], digit, "{row:?}");
        assert_eq!(hits.get(path), Some(&1), "{path} fetched again: {hits:?}");
    }
}
