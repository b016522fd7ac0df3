//! The batch page in the browser.

use super::*;

/// The batch page: a .smi file uploaded, scored through molprop with bad rows failing alone,
/// the in-domain share, a histogram, a sortable table and the CSV download, each checked
/// against the same library sent to the model directly.
pub(crate) async fn batch_page(browser: &Browser, stack: &impl App, c: &Client) {
    let text = std::fs::read_to_string(
        e2e_tests::workspace_root().join("crates/chem/tests/data/rdkit-samples.tsv"),
    )
    .unwrap();
    let mut smiles: Vec<String> = text
        .lines()
        .skip(1)
        .take(40)
        .map(|l| l.split('\t').next().unwrap().to_owned())
        .collect();
    smiles.insert(5, "C1CC(".into());
    smiles.push("XX".into());
    let dir = e2e_tests::temp_dir();
    let file = dir.path().join("library.smi");
    let library: String = smiles
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{s} m{i}\n"))
        .collect();
    std::fs::write(&file, &library).unwrap();
    // What the model says of the same library, sent directly.
    let direct = c
        .post_json(
            &stack.app("/models/molprop/predict"),
            &json!({"input_type": "text", "data": {"texts": smiles, "property": "logp"}}),
            None,
        )
        .await
        .value();
    let items = direct["results"]["items"].as_array().unwrap().clone();
    let good: Vec<&Value> = items.iter().filter(|i| i["success"] == true).collect();
    let inside = good
        .iter()
        .filter(|i| i["results"]["in_reliable_range"] == true)
        .count();
    let lowest = good
        .iter()
        .map(|i| i["results"]["prediction"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);

    browser.goto(&stack.app("/#/batch")).await;
    browser
        .wait_text("#batch-model", |t| t.contains("molprop"))
        .await;
    // Idle: a molecule model is chosen, the box asks for SMILES, and Stop cannot be pressed
    // (before: iris, a tabular model, under a box asking for SMILES).
    let idle = browser
        .eval(
            "return [document.getElementById('batch-model').value, \
             document.getElementById('batch-text').placeholder, \
             document.getElementById('batch-stop').disabled];",
        )
        .await;
    assert_eq!(idle[0], "molprop", "{idle}");
    assert!(idle[1].as_str().unwrap().contains("SMILES"), "{idle}");
    assert_eq!(idle[2], true, "{idle}");
    browser
        .eval(
            "const m = document.getElementById('batch-model'); m.value = 'iris'; \
             m.dispatchEvent(new Event('change')); \
             return document.getElementById('batch-text').placeholder;",
        )
        .await
        .as_str()
        .filter(|p| p.contains("features"))
        .expect("a tabular model's box asks for its features");
    browser
        .eval("document.getElementById('batch-model').value = 'molprop'; return true;")
        .await;
    let upload = browser
        .client
        .find(fantoccini::Locator::Css("#batch-file"))
        .await
        .unwrap();
    upload.send_keys(file.to_str().unwrap()).await.unwrap();
    // The file's text appears in the paste box, where it can still be edited.
    for _ in 0..100 {
        let pasted = browser
            .eval("return document.getElementById('batch-text').value;")
            .await;
        if pasted.as_str() == Some(library.as_str()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    browser.type_into("#batch-data", "property=logp").await;
    browser.click("#batch-form button[type=submit]").await;
    // Done, or the error box of a run that failed (its status is emptied).
    browser
        .wait_text("#main", |t| {
            t.contains("Done:") || t.contains("Could not score")
        })
        .await;
    let status = browser.text("#batch-status").await;
    assert!(
        status.contains("42 of 42 rows through molprop, 2 failed"),
        "{status}: {}",
        browser.text("#batch-results").await
    );
    let share = format!("in domain ({inside} of {})", good.len());
    assert!(status.contains(&share), "{status} lacks {share}");
    // The histogram plots every numeric prediction.
    let label = browser
        .eval("return document.querySelector('svg.histogram').getAttribute('aria-label');")
        .await;
    assert!(
        label
            .as_str()
            .unwrap()
            .starts_with("Histogram of 40 predictions"),
        "{label}"
    );
    let bars = browser
        .eval("return document.querySelectorAll('svg.histogram rect').length;")
        .await;
    assert!(bars.as_u64().unwrap() >= 2, "{bars}");
    // The table: every row, the bad ones marked; sorting by prediction puts the lowest first.
    let table = browser.text("#batch-table").await;
    assert!(table.contains("First 42 of 42 rows"), "{table}");
    let failed = browser
        .eval("return document.querySelectorAll('#batch-table tr.failed').length;")
        .await;
    assert_eq!(failed, json!(2));
    // Each row that scored shows its molecule; the failed ones show none.
    let drawn = browser
        .eval(
            "return [document.querySelectorAll('#batch-table tbody tr:not(.failed) img.structure').length, \
             document.querySelectorAll('#batch-table tr.failed img.structure').length]",
        )
        .await;
    assert_eq!(drawn, json!([40, 0]), "structures in the batch table");
    browser.click("button.sort[data-column=prediction]").await;
    let first = browser
        .eval("return document.querySelector('#batch-table tbody tr td.num').textContent;")
        .await;
    let first: f64 = first.as_str().unwrap().parse().unwrap();
    assert!((first - lowest).abs() < 1e-3, "{first} vs {lowest}");
    // The download holds every row in input order.
    let csv = browser
        .eval(
            "const a = document.getElementById('batch-download'); \
             return decodeURIComponent(a.href.slice(a.href.indexOf(',') + 1));",
        )
        .await;
    let lines: Vec<&str> = csv.as_str().unwrap().lines().collect();
    assert_eq!(lines.len(), 43, "{csv}");
    assert_eq!(lines[0], "id,input,prediction,in_domain,error");
    assert!(lines[6].starts_with("m5,C1CC(,,,"), "{}", lines[6]);
    browser.screenshot("batch").await;
}
