//! Rules for a chat service (interface A, spec 2.1, 2.2, 4.1, 7).

use super::Probe;
use super::report::{Level, Report};
use hyper::Method;
use serde_json::Value;

pub async fn check(probe: &Probe<'_>, report: &mut Report) {
    let mut first_id = None;
    let problems = match probe.json(Method::GET, "/api/chats", None).await {
        Ok((200, Value::Array(list))) => {
            first_id = list
                .first()
                .and_then(|c| c["id"].as_str())
                .map(str::to_owned);
            probe.shape(&Method::GET, "/api/chats", 200, &Value::Array(list))
        }
        Ok((s, v)) => vec![format!("expected 200 with an array, got {s}: {v}")],
        Err(e) => vec![e],
    };
    report.rule(
        "A.chats",
        Level::Must,
        "GET /api/chats answers 200 with chat summaries",
        problems,
    );

    if let Some(id) = first_id {
        let path = format!("/api/dialog?id={id}");
        let problems = match probe.ok_json(Method::GET, &path, None).await {
            Ok(v) => probe.shape(&Method::GET, "/api/dialog", 200, &v),
            Err(e) => vec![e],
        };
        report.rule(
            "A.dialog",
            Level::Must,
            "GET /api/dialog?id= answers 200 with the dialog",
            problems,
        );
    } else {
        report.rule(
            "A.dialog",
            Level::Should,
            "GET /api/dialog?id= answers 200 with the dialog",
            vec!["no chats to fetch; not checked".into()],
        );
    }
    for (rule, path, want, what) in [
        (
            "A.dialog.missing_id",
            "/api/dialog",
            400,
            "without id answers 400",
        ),
        (
            "A.dialog.unknown_id",
            "/api/dialog?id=conformance-check-no-such-dialog",
            404,
            "with an unknown id answers 404",
        ),
    ] {
        let problems = match probe.call(Method::GET, path, None).await {
            Ok(r) if r.status == want => vec![],
            Ok(r) => vec![format!("expected {want}, got {}", r.status)],
            Err(e) => vec![e],
        };
        report.rule(
            rule,
            Level::Must,
            &format!("GET /api/dialog {what}"),
            problems,
        );
    }
}
