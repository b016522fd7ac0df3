//! Picture files through the digits model: a folder (its pictures in name order, a file
//! that is not a picture and a truncated one failing alone), a glob expanded by the command
//! itself, several files, and `--resume` after new files arrive, keyed by path.

use super::{assert_predictions, csv_rows, header, jsonl, predict, s, stderr};
use e2e_tests::{example_files, model_dir, temp_dir};
use std::path::{Path, PathBuf};

/// The digits model's test examples as files: (true digit, file bytes, extension).
pub fn digit_pictures() -> Vec<(String, Vec<u8>, &'static str)> {
    example_files("digits", "image")
        .into_iter()
        .map(|(_, digit, bytes)| {
            let ext = if bytes.starts_with(b"\x89PNG") {
                "png"
            } else {
                "jpg"
            };
            (digit, bytes, ext)
        })
        .collect()
}

/// Writes `n` pictures into `dir` named `{i:02}-{digit}.{ext}` (the examples in turn);
/// returns each file's path and true digit, in name order.
pub fn write_pictures(dir: &Path, n: usize, first: usize) -> Vec<(PathBuf, String)> {
    std::fs::create_dir_all(dir).unwrap();
    let pictures = digit_pictures();
    (first..first + n)
        .map(|i| {
            let (digit, bytes, ext) = &pictures[i % pictures.len()];
            let path = dir.join(format!("{i:02}-{digit}.{ext}"));
            std::fs::write(&path, bytes).unwrap();
            (path, digit.clone())
        })
        .collect()
}

/// The model in the directory `model` run in process over `inputs`, then `extra`.
fn run_model(
    model: &Path,
    inputs: &[&Path],
    data_dir: &Path,
    extra: &[&str],
) -> std::process::Output {
    let mut args: Vec<&str> = inputs.iter().map(|p| s(p)).collect();
    args.extend(["--model", s(model), "--data-dir", s(data_dir)]);
    args.extend_from_slice(extra);
    predict(&args)
}

/// The digits model run in process over `inputs`, then `extra`.
fn digits(inputs: &[&Path], data_dir: &Path, extra: &[&str]) -> std::process::Output {
    run_model(&model_dir("digits"), inputs, data_dir, extra)
}

#[test]
fn a_folder_is_scored_in_name_order_and_bad_files_fail_alone() {
    let dir = temp_dir();
    let scans = dir.path().join("scans");
    let mut expected: Vec<(PathBuf, Option<String>)> = write_pictures(&scans, 12, 0)
        .into_iter()
        .map(|(p, d)| (p, Some(d)))
        .collect();
    // Named like pictures, but not one, and one cut in half: each its row's error.
    let not_picture = scans.join("05b-notes.png");
    std::fs::write(&not_picture, "a shopping list, not a picture\n").unwrap();
    let png = &digit_pictures()[0].1;
    let truncated = scans.join("07b-cut.png");
    std::fs::write(&truncated, &png[..png.len() / 2]).unwrap();
    expected.push((not_picture, None));
    expected.push((truncated, None));
    expected.sort();
    // Not taken: another kind of file, a hidden file and a subfolder's pictures.
    std::fs::write(scans.join("README.txt"), "scanned on Monday").unwrap();
    std::fs::write(scans.join(".hidden.png"), png).unwrap();
    write_pictures(&scans.join("more"), 2, 0);

    let out = digits(&[&scans], dir.path(), &["--batch-size", "5"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("done: 14 rows through digits"), "{err}");
    assert!(err.contains("failed:   2"), "{err}");
    // Named after the folder, beside it.
    let output = dir.path().join("scans.predictions.csv");
    let head = header(&output);
    assert_eq!(&head[..2], ["id", "prediction"], "{head:?}");
    assert_eq!(&head[head.len() - 2..], ["in_domain", "error"]);
    let col = |name: &str| {
        head.iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no {name} in {head:?}"))
    };
    let rows = csv_rows(&output);
    assert_eq!(rows.len(), expected.len());
    for (row, (path, digit)) in rows.iter().zip(&expected) {
        assert_eq!(&row[0], s(path));
        match digit {
            Some(digit) => {
                assert_eq!(&row[col("prediction")], digit, "{row:?}");
                assert_eq!(&row[col("error")], "", "{row:?}");
                assert!(matches!(&row[col("in_domain")], "true" | "false"));
                // Every label's probability, the predicted one the largest.
                let p = |label: usize| -> f64 {
                    row[col(&format!("probabilities.{label}"))].parse().unwrap()
                };
                let best = (0..10).max_by(|&a, &b| p(a).total_cmp(&p(b))).unwrap();
                assert_eq!(best.to_string(), *digit, "{row:?}");
            }
            None => {
                assert_eq!(&row[col("prediction")], "", "{row:?}");
                assert!(!row[col("error")].is_empty(), "{row:?}");
            }
        }
    }
}

#[test]
fn a_glob_and_several_files() {
    let dir = temp_dir();
    let scans = dir.path().join("scans");
    let written = write_pictures(&scans, 8, 0);
    let sevens: Vec<&PathBuf> = written
        .iter()
        .filter(|(_, d)| d == "7")
        .map(|(p, _)| p)
        .collect();
    assert!(sevens.len() >= 2);
    // Quoted: no shell expands it, the command does.
    let glob = scans.join("*-7.png");
    let output = dir.path().join("sevens.jsonl");
    let out = digits(&[&glob], dir.path(), &["-o", s(&output)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = jsonl(&output);
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let want: Vec<&str> = sevens.iter().map(|p| s(p)).collect();
    assert_eq!(ids, want);
    for row in &rows {
        assert_eq!(row["success"], true, "{row}");
        assert_eq!(row["results"]["prediction"], "7", "{row}");
    }
    // Without -o, a glob's output is named after its folder, beside it.
    let out = digits(&[&scans.join("0?-3.png")], dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = csv_rows(&dir.path().join("scans.predictions.csv"));
    assert_eq!(rows.len(), written.iter().filter(|(_, d)| d == "3").count());
    // A glob matching nothing is an error, not an empty output.
    let none = scans.join("*.webp");
    let out = digits(&[&none], dir.path(), &["-o", s(&dir.path().join("x.csv"))]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no file matches"), "{}", stderr(&out));

    // Several files (as a shell's expansion gives them): the output must be named.
    let (a, b) = (written[0].0.as_path(), written[2].0.as_path());
    let out = digits(&[a, b], dir.path(), &[]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("-o"), "{}", stderr(&out));
    let output = dir.path().join("two.csv");
    let out = digits(&[a, b], dir.path(), &["-o", s(&output)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = csv_rows(&output);
    assert_eq!((&rows[0][0], &rows[1][0]), (s(a), s(b)));
    assert_eq!(&rows[1][1], written[2].1.as_str());
}

#[test]
fn resume_scores_only_the_files_the_output_lacks() {
    let dir = temp_dir();
    let scans = dir.path().join("scans");
    write_pictures(&scans, 8, 0);
    let output = dir.path().join("out.csv");
    let out = digits(&[&scans], dir.path(), &["-o", s(&output)]);
    assert!(out.status.success(), "{}", stderr(&out));
    // What an interruption leaves: the header, the first three rows, half a line.
    let text = std::fs::read_to_string(&output).unwrap();
    let kept: Vec<&str> = text.lines().take(4).collect();
    std::fs::write(&output, format!("{}\n{}", kept.join("\n"), "/half/a/ro")).unwrap();
    // Meanwhile new files arrived, one sorting among the scored ones and one after them.
    let (_, picture, _) = &digit_pictures()[1];
    let early = scans.join("00a-new.png");
    std::fs::write(&early, picture).unwrap();
    let late = write_pictures(&scans, 1, 8);

    let out = digits(&[&scans], dir.path(), &["-o", s(&output), "--resume"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("7 rows through digits"), "{err}");
    assert!(err.contains("after 3 rows of an earlier run"), "{err}");
    assert!(err.contains("written:  10 of 10 rows"), "{err}");
    let after = std::fs::read_to_string(&output).unwrap();
    assert!(after.starts_with(&format!("{}\n", kept.join("\n"))));
    let rows = csv_rows(&output);
    let mut ids: Vec<&str> = rows.iter().map(|r| &r[0]).collect();
    assert_eq!(rows.len(), 10, "{ids:?}");
    assert!(ids.contains(&s(&early)) && ids.contains(&s(&late[0].0)));
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 10, "each file once");
    assert!(rows.iter().all(|r| r[r.len() - 1].is_empty()), "{rows:?}");

    // Nothing left: a resume scores nothing and keeps the file.
    let out = digits(&[&scans], dir.path(), &["-o", s(&output), "--resume"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("done: 0 rows"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&output).unwrap(), after);
}

#[test]
fn files_for_a_model_that_takes_none_and_a_table_for_one_that_takes_files() {
    let dir = temp_dir();
    let scans = dir.path().join("scans");
    write_pictures(&scans, 2, 0);
    let out = run_model(&model_dir("iris"), &[&scans], dir.path(), &[]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("not files of pictures or sounds"),
        "{}",
        stderr(&out)
    );
    let table = dir.path().join("urls.csv");
    std::fs::write(&table, "image_url\nhttp://127.0.0.1:9/a.png\n").unwrap();
    let out = digits(&[&table], dir.path(), &[]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--url-column"), "{}", stderr(&out));
}

/// A picture of grey noise, `side` pixels square, as a PNG (noise does not compress: the
/// file is about `side * side` bytes).
fn noise_png(side: u32, seed: u32) -> Vec<u8> {
    let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    let picture = image::GrayImage::from_fn(side, side, |_, _| {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        image::Luma([(state >> 24) as u8])
    });
    let mut bytes = std::io::Cursor::new(Vec::new());
    picture
        .write_to(&mut bytes, image::ImageFormat::Png)
        .unwrap();
    bytes.into_inner()
}

#[test]
fn batches_of_files_over_the_body_cap_are_halved_and_every_file_answered() {
    let dir = temp_dir();
    // The digits model taking files of up to 200 kB: its body cap stays the host's 1 MiB.
    let model = dir.path().join("digits");
    e2e_tests::copy_model(&model_dir("digits"), &model);
    let manifest = std::fs::read_to_string(model.join("model.toml")).unwrap();
    let manifest = manifest.replace("[input.image]\n", "[input.image]\nmax_bytes = 200000\n");
    std::fs::write(model.join("model.toml"), manifest).unwrap();
    let scans = dir.path().join("scans");
    std::fs::create_dir(&scans).unwrap();
    // 24 files of about 160 kB: the first batches (4 MiB of base64) are four times the cap.
    let files: Vec<PathBuf> = (0..24)
        .map(|i| {
            let path = scans.join(format!("noise-{i:02}.png"));
            std::fs::write(&path, noise_png(400, i)).unwrap();
            path
        })
        .collect();
    assert!(std::fs::metadata(&files[0]).unwrap().len() > 150_000);
    let output = dir.path().join("noise.jsonl");
    let batches = ["-o", s(&output), "--batch-size", "24", "--concurrency", "1"];
    let out = run_model(&model, &[&scans], dir.path(), &batches);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = jsonl(&output);
    assert_eq!(rows.len(), files.len());
    for (row, file) in rows.iter().zip(&files) {
        assert_eq!(row["id"], s(file));
        assert_eq!(row["success"], true, "{row}");
    }
}

#[test]
fn a_folder_of_sounds_through_the_spoken_digits_model() {
    let dir = temp_dir();
    let recordings = dir.path().join("recordings");
    std::fs::create_dir(&recordings).unwrap();
    let mut expected = Vec::new();
    for (i, (_, word, bytes)) in example_files("spoken-digits", "audio").iter().enumerate() {
        assert!(bytes.starts_with(b"RIFF"), "the examples are WAV files");
        let path = recordings.join(format!("{i:02}-{word}.wav"));
        std::fs::write(&path, bytes).unwrap();
        expected.push((s(&path).to_owned(), Some(word.clone())));
    }
    // A WAV cut after its header fails alone; a picture is no sound and is not listed.
    let cut = recordings.join("99-cut.wav");
    std::fs::write(&cut, &example_files("spoken-digits", "audio")[0].2[..44]).unwrap();
    expected.push((s(&cut).to_owned(), None));
    std::fs::write(recordings.join("cover.png"), &digit_pictures()[0].1).unwrap();
    let output = dir.path().join("words.csv");
    let model = model_dir("spoken-digits");
    let out = run_model(&model, &[&recordings], dir.path(), &["-o", s(&output)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_predictions(&output, 1, &expected);
}
