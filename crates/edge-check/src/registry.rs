//! Rules for a port registry (interface C, spec 2.13, 3, 4.3). The check registers probes of
//! its own and removes every one of them before it ends.

use super::Probe;
use super::report::{Level, Report};
use hyper::Method;
use serde_json::{Value, json};

fn registration(preferred: Option<u64>) -> Value {
    json!({
        "app_name": "conformance-check", "app_version": "1.2.0", "model_name": "conformance-probe",
        "process_id": std::process::id(), "preferred_port": preferred,
        "reason": "runtime-host check: conformance probe, removed when the check ends", "metadata": {}
    })
}

fn registration_problems(probe: &Probe<'_>, v: &Value) -> Vec<String> {
    let mut p = probe.shape(&Method::POST, "/register", 200, v);
    if let Some(e) = v["expires_at"].as_str()
        && edge_api::time::parse_iso8601_no_zone(e).is_none()
    {
        p.push(format!(
            "register.expires_at: expected ISO 8601 without zone, got {e}"
        ));
    }
    p
}

/// The port and registration id a registration answer grants.
fn granted(v: &Value) -> Option<(u64, String)> {
    v["assigned_port"]
        .as_u64()
        .zip(v["registration_id"].as_str().map(str::to_owned))
}

pub async fn check(probe: &Probe<'_>, report: &mut Report) {
    let mut made: Vec<(u64, String)> = Vec::new();
    let (problems, first) = match probe
        .ok_json(Method::POST, "/register", Some(registration(None)))
        .await
    {
        Ok(v) => (registration_problems(probe, &v), granted(&v)),
        Err(e) => (vec![e], None),
    };
    report.rule(
        "C.register",
        Level::Must,
        "POST /register answers 200 with a port and registration id",
        problems,
    );
    let Some((port, id)) = first else { return };
    made.push((port, id.clone()));

    // A second registration of another model, asking for a port.
    let mut second = registration(Some(port + 1));
    second["model_name"] = json!("conformance-probe-2");
    let problems = match probe.ok_json(Method::POST, "/register", Some(second)).await {
        Ok(v) => {
            made.extend(granted(&v));
            let mut problems = registration_problems(probe, &v);
            if v["assigned_port"].as_u64() == Some(port) {
                problems.push(format!(
                    "assigned_port: {port} is already held by the first probe"
                ));
            }
            problems
        }
        Err(e) => vec![e],
    };
    report.rule(
        "C.register.preferred",
        Level::Must,
        "registration with preferred_port gets a port no live registration holds",
        problems,
    );

    let path = format!("/heartbeat/{port}");
    let beat = Some(json!({"registration_id": id}));
    let problems = match probe.ok_json(Method::POST, &path, beat).await {
        Ok(v) => probe.shape(&Method::POST, &path, 200, &v),
        Err(e) => vec![e],
    };
    report.rule(
        "C.heartbeat",
        Level::Must,
        "POST /heartbeat/{port} answers 200 for a live registration",
        problems,
    );

    let problems = match probe.call(Method::GET, "/registry", None).await {
        Ok(r) if r.status == 200 => {
            let text = String::from_utf8_lossy(&r.body).into_owned();
            let mut p = Vec::new();
            if !text.contains(&port.to_string()) {
                p.push(format!("/registry does not list port {port}"));
            }
            if made.iter().any(|(_, i)| text.contains(i.as_str())) {
                p.push(
                    "/registry reveals a registration_id (it is the only credential to unregister)"
                        .into(),
                );
            }
            p
        }
        Ok(r) => vec![format!("expected 200, got {}", r.status)],
        Err(e) => vec![e],
    };
    report.rule(
        "C.registry",
        Level::Must,
        "GET /registry lists live registrations without their ids",
        problems,
    );

    let wrong = format!("/unregister/{port}?registration_id=00000000-0000-4000-8000-00000000dead");
    let problems = match probe.json(Method::DELETE, &wrong, None).await {
        Ok((s, v)) if (400..500).contains(&s) => probe.schema("ErrorBody", &v),
        Ok((s, _)) => vec![format!("expected a 4xx refusal, got {s}")],
        Err(e) => vec![e],
    };
    report.rule(
        "C.unregister.wrong_id",
        Level::Must,
        "unregistering with a wrong registration_id is refused with the error body",
        problems,
    );

    let problems = match probe
        .ok_json(
            Method::DELETE,
            &format!("/unregister/{port}?registration_id={id}"),
            None,
        )
        .await
    {
        Ok(v) => {
            made.retain(|(p, _)| *p != port);
            let path = format!("/unregister/{port}");
            let mut p = probe.shape(&Method::DELETE, &path, 200, &v);
            if v["freed_port"].as_u64() != Some(port) {
                p.push(format!(
                    "unregister.freed_port: expected {port}, got {}",
                    v["freed_port"]
                ));
            }
            p
        }
        Err(e) => vec![e],
    };
    report.rule(
        "C.unregister",
        Level::Must,
        "unregistering with the right registration_id frees the port",
        problems,
    );

    let problems = match probe
        .ok_json(Method::POST, "/register", Some(registration(Some(port))))
        .await
    {
        Ok(v) => {
            made.extend(granted(&v));
            if v["assigned_port"].as_u64() == Some(port) {
                vec![]
            } else {
                vec![format!(
                    "expected the freed port {port}, got {}",
                    v["assigned_port"]
                )]
            }
        }
        Err(e) => vec![e],
    };
    report.rule(
        "C.freed_port_reusable",
        Level::Must,
        "a freed port can be registered again at once",
        problems,
    );

    for (p, i) in made {
        let _ = probe
            .call(
                Method::DELETE,
                &format!("/unregister/{p}?registration_id={i}"),
                None,
            )
            .await;
    }
}
