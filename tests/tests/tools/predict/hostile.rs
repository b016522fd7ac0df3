//! A job that one bad row or a second run cannot spoil (issue 45, section 5): a row far over
//! the row limit, an SD record far over the record limit and a line that is not UTF-8 each
//! fail alone while the rest is scored, with the memory of a short row; a second run on an
//! output still being written is refused, whether it resumes or replaces.

use super::{
    csv_rows, echo_rows, predict, s, slow_echo_args, spawn_predict, stderr, wait_for_lines,
};
use e2e_tests::host::HostBuilder;
use e2e_tests::{component, host_binary, model_dir, temp_dir};
use std::collections::HashSet;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Runs `runtime-host predict ARGS`, sampling its peak resident memory (`VmHWM`) until it
/// exits: whether it succeeded, what it said, and the peak in MiB.
fn predict_measured(args: &[&str]) -> (bool, String, u64) {
    let mut child = Command::new(host_binary())
        .arg("predict")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0;
    while child.try_wait().unwrap().is_none() {
        if let Ok(status) = std::fs::read_to_string(&status_file)
            && let Some(line) = status.lines().find(|l| l.starts_with("VmHWM:"))
        {
            let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
            peak_kib = peak_kib.max(kib);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    (out.status.success(), stderr(&out), peak_kib >> 10)
}

/// 64 MiB of `byte`, written to `file` without holding it.
fn write_giant(file: &mut std::fs::File, byte: u8) {
    let chunk = vec![byte; 1 << 20];
    for _ in 0..64 {
        file.write_all(&chunk).unwrap();
    }
}

#[test]
fn hostile_rows_fail_alone_and_memory_stays_bounded() {
    let dir = temp_dir();
    let host = HostBuilder::new(component("molprop"), dir.path())
        .shared_compile_cache()
        .start();
    let url = host.base_url();

    // A SMILES file: a good row, a 64 MiB row, a row that is not UTF-8, a good row.
    let smi = dir.path().join("hostile.smi");
    let mut f = std::fs::File::create(&smi).unwrap();
    f.write_all(b"CCO ethanol\n").unwrap();
    write_giant(&mut f, b'C');
    f.write_all(b" giant\n\xff\xfe\xfd broken\nc1ccccc1 benzene\n")
        .unwrap();
    drop(f);
    // A CSV file with the same rows.
    let csv = dir.path().join("hostile.csv");
    let mut f = std::fs::File::create(&csv).unwrap();
    f.write_all(b"name,smiles\nethanol,CCO\ngiant,").unwrap();
    write_giant(&mut f, b'C');
    f.write_all(b"\nbroken,\xff\xfe\xfd\nbenzene,c1ccccc1\n")
        .unwrap();
    drop(f);
    // An SD file: a real record, a 64 MiB one, a real one.
    let sd_text =
        std::fs::read_to_string(model_dir("solubility").join("solubility.test.sdf")).unwrap();
    let end = sd_text.find("$$$$").unwrap();
    let first = format!("{}$$$$\n", &sd_text[..end]);
    let sdf = dir.path().join("hostile.sdf");
    let mut f = std::fs::File::create(&sdf).unwrap();
    f.write_all(first.as_bytes()).unwrap();
    f.write_all(b"giant\n").unwrap();
    for _ in 0..64 {
        f.write_all(&[b"> <junk>\n".as_slice(), &vec![b'x'; 1 << 20], b"\n"].concat())
            .unwrap();
    }
    f.write_all(b"$$$$\n").unwrap();
    f.write_all(first.as_bytes()).unwrap();
    drop(f);

    for (input, expect) in [
        (&smi, ["ethanol", "", "", "benzene"]),
        // The giant row's id is past the limit too: it is named by its number.
        (&csv, ["ethanol", "2", "broken", "benzene"]),
    ] {
        let out = dir.path().join(format!("{}.out.csv", input.display()));
        let (ok, said, peak_mib) = predict_measured(&[
            s(input),
            "--url",
            &url,
            "-o",
            s(&out),
            "--data",
            "property=logp",
        ]);
        assert!(ok, "{}: {said}", input.display());
        assert!(peak_mib < 48, "{}: {peak_mib} MiB at peak", input.display());
        let rows = csv_rows(&out);
        assert_eq!(rows.len(), 4, "{}: {rows:?}", input.display());
        let error = |i: usize| rows[i].get(rows[i].len() - 1).unwrap().to_owned();
        assert!(error(0).is_empty() && error(3).is_empty(), "{rows:?}");
        assert!(error(1).contains("over the limit"), "{}", error(1));
        assert!(error(2).contains("not UTF-8"), "{}", error(2));
        if !expect[1].is_empty() {
            let ids: Vec<&str> = rows.iter().map(|r| r.get(0).unwrap()).collect();
            assert_eq!(ids, expect);
        }
    }

    let out = dir.path().join("sd.out.csv");
    let (ok, said, peak_mib) = predict_measured(&[s(&sdf), "--url", &url, "-o", s(&out)]);
    assert!(ok, "{said}");
    assert!(peak_mib < 48, "{peak_mib} MiB at peak");
    let rows = csv_rows(&out);
    assert_eq!(rows.len(), 3, "{rows:?}");
    let error = |i: usize| rows[i].get(rows[i].len() - 1).unwrap().to_owned();
    assert!(error(1).contains("SD record 2"), "{}", error(1));
    assert!(error(0).is_empty() && error(2).is_empty(), "{rows:?}");
}

#[test]
fn a_second_run_on_an_output_being_written_is_refused() {
    let dir = temp_dir();
    let input = dir.path().join("rows.jsonl");
    echo_rows(&input, 600, 0);
    let output = dir.path().join("out.csv");
    let args = |extra: &[&str]| {
        let one_at_a_time = ["--batch-size", "5", "--concurrency", "1"];
        slow_echo_args(&input, &output, &[&one_at_a_time[..], extra].concat())
    };
    let first = spawn_predict(&args(&[]));
    wait_for_lines(&output, 10);
    for extra in [["--resume"], ["--force"]] {
        let a: Vec<String> = args(&extra);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let second = predict(&a);
        let said = stderr(&second);
        assert!(!second.status.success(), "{extra:?}: {said}");
        assert!(
            said.contains("another `runtime-host predict` is writing"),
            "{said}"
        );
    }
    let out = first.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = csv_rows(&output);
    let ids: HashSet<&str> = rows.iter().map(|r| r.get(0).unwrap()).collect();
    assert_eq!(rows.len(), 600);
    assert_eq!(ids.len(), 600, "no row written twice");
}
