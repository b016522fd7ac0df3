//! The bench (`edge-bench`, run by `cargo xtask bench`) runs end to end on this machine: every section starts its processes,
//! measures, stops them and reports. This checks that the command works and reports real
//! measurements; it asserts no speed (figures come from the command itself, see
//! docs/BENCHMARKS.md). The Python peer is left out here: it needs PyPI.

use e2e_tests::{bench_binary, native_peer_binary, temp_dir, workspace_root};
use serde_json::Value;

#[test]
fn bench_quick_runs_every_section_and_reports_measurements() {
    let work = temp_dir();
    let json = work.path().join("figures.json");
    let out = std::process::Command::new(bench_binary())
        .current_dir(workspace_root())
        .args(["--quick", "--no-python", "--json"])
        .arg(&json)
        .arg("--native")
        .arg(native_peer_binary())
        .arg("--work-dir")
        .arg(work.path().join("scratch"))
        .arg("--ai-models-dir")
        .arg(e2e_tests::ai_models_dir())
        // Its hosts load what the tests before it compiled (it runs last, alone): compiling
        // the stack again, ONNX snapshots and all, was most of its time on a fresh machine.
        // Compile times themselves are measured in their own empty cache (`component`).
        .env("RUNTIME_HOST_CACHE_DIR", e2e_tests::shared_cache_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{stdout}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();

    let rows = r["predict"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        9,
        "molprop logp and all, and solubility logS, at 1, 16 and 64 connections"
    );
    for row in rows {
        for side in row["sides"].as_array().unwrap() {
            let (name, f) = (&side[0], &side[1]);
            assert!(f["rps"].as_f64().unwrap() > 0.0, "{name}: {row}");
            assert_eq!(f["errors"], 0, "{name}: {row}");
            assert!(f["p99_ms"].as_f64().unwrap() >= f["p50_ms"].as_f64().unwrap());
        }
    }
    // Embeddings: one and 32 sentences per request, at 1 and 16 connections.
    let embeddings = r["embeddings"].as_array().unwrap();
    let loads: Vec<(u64, u64)> = embeddings
        .iter()
        .map(|e| {
            let n = |k: &str| e[k].as_u64().unwrap();
            (n("texts_per_request"), n("connections"))
        })
        .collect();
    assert_eq!(loads, [(1, 1), (1, 16), (32, 1), (32, 16)]);
    for row in embeddings {
        assert_eq!(side_names(&row["sides"]), ["host"], "{row}");
        let f = &row["sides"][0][1];
        assert!(f["rps"].as_f64().unwrap() > 0.0, "{row}");
        assert_eq!(f["errors"], 0, "{row}");
    }
    // Both instance modes of the host and its Winch code in every comparison, and native
    // beside molprop.
    let sides = ["host", "host-reuse1", "host-baseline", "native"];
    assert_eq!(side_names(&r["health"]), sides);
    for row in rows {
        let want = if row["property"] == "logS" {
            &sides[..3]
        } else {
            &sides[..]
        };
        assert_eq!(side_names(&row["sides"]), want, "{row}");
    }
    assert_eq!(r["registry"]["duplicate_ports"], 0);
    assert_eq!(r["registry"]["errors"], 0);
    assert!(r["registry"]["registrations_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(r["registry_scale"].as_array().unwrap().len(), 2);
    // The chat list, whole and one page, with 1,000 chats (10,000 without --quick).
    let lists = r["chat_list"].as_array().unwrap();
    assert_eq!(lists.len(), 2, "{lists:?}");
    for l in lists {
        assert_eq!(l["chats"], 1000, "{l}");
        assert!(l["p50_ms"].as_f64().unwrap() > 0.0, "{l}");
    }
    assert!(
        lists[0]["bytes"].as_u64() > lists[1]["bytes"].as_u64(),
        "a page is smaller"
    );
    // The open loop: three loads, answered on both sides (past the host's capacity some
    // requests may fail: that is a figure, not a fault).
    let open = r["open_loop"].as_array().unwrap();
    assert_eq!(open.len(), 3, "25, 50 and 75 % of native's capacity");
    for row in open {
        assert!(row["rate"].as_f64().unwrap() > 0.0, "{row}");
        for side in ["host", "native"] {
            assert!(
                row[side]["ok"].as_u64().unwrap() > 0,
                "{side} answered: {row}"
            );
        }
    }
    assert!(r["startup_cold_ms"].as_f64().unwrap() > 0.0);
    assert!(r["startup_warm_ms"].as_f64().unwrap() > 0.0);
    let memory: Vec<&str> = r["memory_mib"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m[0].as_str().unwrap())
        .collect();
    for setup in [
        "25 molprop",
        "13 molprop + 12 solubility",
        "25 molprop + minilm",
    ] {
        assert!(memory.iter().any(|m| m.contains(setup)), "{memory:?}");
    }
    // /predict and /health, quiet and while the metrics are scraped, without an error.
    let scrape = r["scrape"].as_array().unwrap();
    assert_eq!(scrape.len(), 2, "{scrape:?}");
    for row in scrape {
        assert!(row["scrapes"].as_u64().unwrap() > 0, "{row}");
        for side in ["quiet", "scraped"] {
            assert_eq!(row[side]["errors"], 0, "{row}");
            assert!(row[side]["rps"].as_f64().unwrap() > 0.0, "{row}");
        }
    }
    // A SMILES file (5,000 rows with --quick) through `predict` against `up` (and a fifth of
    // it, for memory) and through the native loop; every row written, checked by the bench.
    let library: Vec<(&str, &str, u64)> = r["library"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            assert!(l["rows_per_s"].as_f64().unwrap() > 0.0, "{l}");
            let side = l["side"].as_str().unwrap();
            if side == "host" {
                assert!(l["peak_rss_mib"].as_f64().unwrap() > 1.0, "{l}");
            }
            (
                l["model"].as_str().unwrap(),
                side,
                l["rows"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        library,
        [
            ("logp", "host", 1000),
            ("logp", "native", 5000),
            ("logp", "host", 5000),
            ("solubility", "host", 5000)
        ]
    );
    // Instructions per request under callgrind, where valgrind is here (the test command
    // installs it when it runs as root, as in CI, and then requires it).
    let counted = r["instructions"].as_array().unwrap();
    if counted.is_empty() {
        assert!(
            !e2e_tests::tools::Tool::Valgrind.required(),
            "valgrind was installed, yet the section did not run:\n{stdout}"
        );
        assert!(stdout.contains("section instructions skipped"), "{stdout}");
    } else {
        for load in ["/health", "/predict logp", "/predict all"] {
            let side = |name: &str| {
                counted
                    .iter()
                    .find(|c| c["load"] == load && c["side"] == name)
                    .unwrap_or_else(|| panic!("no {name} row for {load}: {counted:?}"))
            };
            let (host, native) = (side("host"), side("native"));
            assert!(host["requests"].as_u64().unwrap() > 0, "{host}");
            let per = |row: &Value| row["per_request"].as_f64().unwrap();
            let guest = host["guest_per_request"].as_f64().unwrap();
            // The host runs the same model code as native, in WebAssembly, plus its runtime.
            assert!(
                per(native) > 1000.0 && per(host) > per(native),
                "{host} {native}"
            );
            assert!(guest > 0.0 && guest < per(host), "{host}");
        }
        assert!(stdout.contains("instructions per request"), "{stdout}");
    }
    // Pictures and sounds (issue 58): every load answered by the host without an error, the
    // media crate's steps timed natively, and each example model's memory.
    let media: Vec<(&str, u64)> = r["media"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            assert_eq!(side_names(&row["sides"]), ["host"], "{row}");
            let f = &row["sides"][0][1];
            assert!(f["rps"].as_f64().unwrap() > 0.0, "{row}");
            assert_eq!(f["errors"], 0, "{row}");
            (
                row["property"].as_str().unwrap(),
                row["connections"].as_u64().unwrap(),
            )
        })
        .collect();
    let (png, jpeg, wav) = (
        "digits, 1 KB PNG",
        "digits, 1 MP JPEG",
        "spoken-digits, 1 s WAV",
    );
    assert_eq!(media, [(png, 1), (png, 16), (jpeg, 1), (wav, 1), (wav, 16)]);
    let steps: Vec<&str> = r["media_steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["what"].as_str().unwrap())
        .collect();
    for step in ["1 MP JPEG: media::image::to_tensor", "1 s of 16 kHz WAV"] {
        assert!(steps.iter().any(|s| s.starts_with(step)), "{steps:?}");
    }
    for model in ["digits", "spoken-digits"] {
        let after = format!("runtime-host model ({model}), after the loads");
        assert!(memory.contains(&after.as_str()), "{memory:?}");
    }
    // The language model (issue 60), where its file is installed: `up` streamed every row
    // (llama-cpp-python, a Python peer, is left out here), every token counted as `usage`
    // says, and its memory read before and after the model loaded.
    let model = edge_api::language_model::MODEL;
    if e2e_tests::ai_models_dir().join(model).is_dir() {
        let llm = &r["llm"];
        assert_eq!(llm["sides"].as_array().unwrap().len(), 1, "{llm}");
        let ours = &llm["sides"][0];
        assert_eq!(ours["name"], "runtime-host", "{llm}");
        for row in [
            "one_stream_tokens_per_s",
            "first_token_ms",
            "concurrent_tokens_per_s",
        ] {
            assert!(ours[row]["median"].as_f64().unwrap() > 0.0, "{row}: {llm}");
        }
        assert_eq!(ours["one_stream_tokens"], serde_json::json!([8]), "{llm}");
        assert_eq!(ours["concurrent_tokens"], serde_json::json!([32]), "{llm}");
        assert_eq!(ours["usage_mismatches"], 0, "{llm}");
        assert!(llm["long_prompt_tokens"].as_u64().unwrap() > 150, "{llm}");
        let mib = |k: &str| ours[k].as_f64().unwrap();
        assert!(
            mib("rss_loaded_mib") > mib("rss_before_load_mib") + 50.0,
            "{llm}"
        );
        assert!(stdout.contains("language model"), "{stdout}");
    } else {
        assert!(stdout.contains("llm skipped"), "{stdout}");
    }
    assert!(r["targets"].as_array().unwrap().len() >= 5);
    assert!(stdout.contains("targets"), "the table is printed");
}

/// The names of a comparison's sides (`[[name, figures], ...]`).
fn side_names(sides: &Value) -> Vec<&str> {
    sides
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[0].as_str().unwrap())
        .collect()
}
