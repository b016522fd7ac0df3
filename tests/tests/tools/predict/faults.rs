//! A deployment that fails (HTTP 500) on one file: the file fails alone, every other file
//! is scored, and `--resume` sends nothing already answered. The deployment is a stand-in
//! (`e2e_tests::fake`), since no real model can be made to run out of memory on one chosen
//! file on demand; it answers as the onnx-model component does, and 500
//! `memory_limit_exceeded` for any request carrying the poisoned file, however batched.

use super::media::digit_pictures;
use super::{assert_predictions, csv_rows, header, predict, s, stderr};
use base64::Engine;
use e2e_tests::temp_dir;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Most pictures one request may carry, as the stand-in's document says.
const MAX_ITEMS: usize = 8;

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The stand-in deployment: what it answers for each file's base64, and every request's
/// base64 items as it received them, so a test can tell what was sent and in which batches.
struct Deployment {
    url: String,
    requests: Arc<Mutex<Vec<Vec<String>>>>,
}

impl Deployment {
    /// Serves a digits classifier that knows `digits` (base64 to digit) and fails with 500
    /// on any request holding `poison`.
    async fn start(digits: HashMap<String, String>, poison: String) -> Self {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        let digits = Arc::new(digits);
        let url = e2e_tests::fake::serve(move |path, body| {
            let (digits, poison, log) = (digits.clone(), poison.clone(), log.clone());
            async move { answer(&path, &body, &digits, &poison, &log) }
        })
        .await;
        Self { url, requests }
    }

    /// The requests received since the last call, each its base64 items.
    fn take_requests(&self) -> Vec<Vec<String>> {
        std::mem::take(&mut *self.requests.lock().unwrap())
    }
}

fn answer(
    path: &str,
    body: &Value,
    digits: &HashMap<String, String>,
    poison: &str,
    log: &Mutex<Vec<Vec<String>>>,
) -> (u16, Value) {
    match path {
        "/capabilities" => (
            200,
            json!({"model": "faulty-digits", "capabilities": [{
                "name": "classify", "input_types": ["image"],
                "output_schema": {"prediction": "string", "in_domain": "boolean"},
                "description": "a digit classifier that fails on one file"}]}),
        ),
        // The one thing `predict` reads from the document: how many pictures a batch holds.
        "/openapi.json" => (
            200,
            json!({"components": {"schemas": {"PredictionRequest": {"properties": {"data": {
                "properties": {"images": {"type": "array", "maxItems": MAX_ITEMS}}}}}}}}),
        ),
        "/predict" => {
            let data = &body["data"];
            let items: Vec<String> = match (&data["images"], &data["image"]) {
                (Value::Array(list), _) => list
                    .iter()
                    .map(|v| v.as_str().unwrap_or_default().to_owned())
                    .collect(),
                (_, Value::String(one)) => vec![one.clone()],
                _ => {
                    return (
                        400,
                        json!({"error": "no images", "error_code": "bad_input"}),
                    );
                }
            };
            log.lock().unwrap().push(items.clone());
            if items.iter().any(|i| i == poison) {
                return (
                    500,
                    json!({"error": "the instance ran out of memory",
                           "error_code": "memory_limit_exceeded"}),
                );
            }
            let results: Vec<Value> = items
                .iter()
                .map(|i| match digits.get(i) {
                    Some(d) => json!({"success": true,
                                      "results": {"prediction": d, "in_domain": true}}),
                    None => json!({"success": false, "results": {},
                                   "error_message": "a file this stand-in does not know"}),
                })
                .collect();
            if data["image"].is_string() {
                return (200, results[0].clone());
            }
            (200, json!({"success": true, "results": {"items": results}}))
        }
        _ => (
            404,
            json!({"error": format!("no {path}"), "error_code": "not_found"}),
        ),
    }
}

/// `predict ARGS` on a blocking thread (the stand-in serves on this runtime meanwhile).
async fn run(args: Vec<String>) -> std::process::Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        predict(&args)
    })
    .await
    .unwrap()
}

/// Writes `n` pictures into `dir`, each made distinct by a trailer after its picture (the
/// stand-in tells files apart by their bytes; it decodes nothing): (path, base64, digit).
fn distinct_pictures(dir: &Path, n: usize) -> Vec<(PathBuf, String, String)> {
    std::fs::create_dir_all(dir).unwrap();
    let pictures = digit_pictures();
    (0..n)
        .map(|i| {
            let (digit, bytes, ext) = &pictures[i % pictures.len()];
            let bytes = [bytes.as_slice(), format!("\0file {i}").as_bytes()].concat();
            let path = dir.join(format!("{i:02}-{digit}.{ext}"));
            std::fs::write(&path, &bytes).unwrap();
            (path, base64(&bytes), digit.clone())
        })
        .collect()
}

/// The poisoned file's error, as the run wrote it.
fn assert_failed_with_500(row: &csv::StringRecord) {
    let error = &row[row.len() - 1];
    assert!(
        error.contains("HTTP 500") && error.contains("memory_limit_exceeded"),
        "{row:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_the_deployment_fails_on_fails_alone_and_resume_sends_nothing_scored() {
    let dir = temp_dir();
    let scans = dir.path().join("scans");
    let files = distinct_pictures(&scans, 12);
    // Sorts fifth, inside the first batch of eight.
    let poisoned = scans.join("03b-poison.png");
    let poison_bytes = [digit_pictures()[0].1.as_slice(), b"\0poison"].concat();
    std::fs::write(&poisoned, &poison_bytes).unwrap();
    // A file that arrives before the resume below.
    let late_bytes = [digit_pictures()[1].1.as_slice(), b"\0late"].concat();
    let late_digit = digit_pictures()[1].0.clone();
    let mut digits: HashMap<String, String> = files
        .iter()
        .map(|(_, b, d)| (b.clone(), d.clone()))
        .collect();
    digits.insert(base64(&late_bytes), late_digit.clone());
    let deployment = Deployment::start(digits, base64(&poison_bytes)).await;

    let output = dir.path().join("scans.csv");
    let args = |extra: &[&str]| -> Vec<String> {
        [s(&scans), "--url", &deployment.url, "-o", s(&output)]
            .iter()
            .chain(["--batch-size", "8", "--concurrency", "1"].iter())
            .chain(extra)
            .map(|x| x.to_string())
            .collect()
    };
    let out = run(args(&[])).await;
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("done: 13 rows through faulty-digits"), "{err}");
    assert!(err.contains("failed:   1"), "{err}");

    // Every other file has its own digit; the poisoned one its error, in name order.
    let mut expected: Vec<(String, Option<String>)> = files
        .iter()
        .map(|(p, _, d)| (s(p).to_owned(), Some(d.clone())))
        .collect();
    expected.insert(4, (s(&poisoned).to_owned(), None));
    let prediction = header(&output).iter().position(|h| h == "prediction");
    assert_predictions(&output, prediction.unwrap(), &expected);
    let rows = csv_rows(&output);
    assert_failed_with_500(&rows[4]);
    // Its batch halved down to the poisoned file, sent alone at last; every other file was
    // answered exactly once.
    let requests = deployment.take_requests();
    let poison = base64(&poison_bytes);
    let with_poison: Vec<usize> = requests
        .iter()
        .filter(|r| r.contains(&poison))
        .map(Vec::len)
        .collect();
    assert_eq!(with_poison, [8, 4, 2, 1], "{requests:?}");
    let answered: Vec<&String> = requests
        .iter()
        .filter(|r| !r.contains(&poison))
        .flatten()
        .collect();
    assert_eq!(answered.len(), files.len(), "{requests:?}");
    assert!(requests.iter().all(|r| r.len() <= MAX_ITEMS));

    // Resumed on a complete output: nothing is sent, the poisoned file included.
    let complete = std::fs::read_to_string(&output).unwrap();
    let out = run(args(&["--resume"])).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("done: 0 rows"), "{}", stderr(&out));
    assert_eq!(deployment.take_requests(), Vec::<Vec<String>>::new());
    assert_eq!(std::fs::read_to_string(&output).unwrap(), complete);

    // Cut after the poisoned file's row (the header and five rows), a new file arrived:
    // only the files the output lacks are sent.
    let kept: Vec<&str> = complete.lines().take(6).collect();
    std::fs::write(&output, format!("{}\n", kept.join("\n"))).unwrap();
    let late_path = scans.join("99-late.png");
    std::fs::write(&late_path, &late_bytes).unwrap();
    let out = run(args(&["--resume"])).await;
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("after 5 rows of an earlier run"), "{err}");
    let mut sent: Vec<String> = deployment.take_requests().concat();
    sent.sort();
    let mut lacking: Vec<String> = files[4..].iter().map(|(_, b, _)| b.clone()).collect();
    lacking.push(base64(&late_bytes));
    lacking.sort();
    assert_eq!(sent, lacking, "only the files the output lacked");
    expected.push((s(&late_path).to_owned(), Some(late_digit)));
    assert_predictions(&output, prediction.unwrap(), &expected);
    assert_failed_with_500(&csv_rows(&output)[4]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_file_the_deployment_fails_on_gets_its_error() {
    let dir = temp_dir();
    let poisoned = dir.path().join("poison.png");
    let poison_bytes = [digit_pictures()[0].1.as_slice(), b"\0poison"].concat();
    std::fs::write(&poisoned, &poison_bytes).unwrap();
    let deployment = Deployment::start(HashMap::new(), base64(&poison_bytes)).await;
    let output = dir.path().join("one.csv");
    let args = [s(&poisoned), "--url", &deployment.url, "-o", s(&output)];
    let out = run(args.iter().map(|x| x.to_string()).collect()).await;
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("failed:   1"), "{err}");
    let rows = csv_rows(&output);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(&rows[0][0], s(&poisoned));
    assert_failed_with_500(&rows[0]);
    assert_eq!(
        deployment.take_requests().len(),
        1,
        "sent once, not retried"
    );
}
