//! The OpenAPI documents in `docs/openapi/` against the real components: each document is
//! well-formed OpenAPI 3.1, lists exactly the routes the component's route table serves, and
//! every answer recorded from the real services over HTTP validates against its schema.

use e2e_tests::contract::{Contract, references};
use e2e_tests::{Client, HostBuilder, Reply, component, temp_dir};
use edge_api::routes::Route;
use hyper::Method;
use serde_json::{Value, json};
use std::collections::BTreeSet;

const DOCUMENTS: [&str; 3] = ["chat", "model", "registry"];

fn route_table(name: &str) -> &'static [Route] {
    match name {
        "chat" => &edge_api::chat::ROUTES,
        "model" => &edge_api::model::ROUTES,
        "registry" => &edge_api::registry::ROUTES,
        _ => unreachable!(),
    }
}

#[test]
fn documents_are_openapi_3_1_and_every_reference_resolves() {
    for name in DOCUMENTS {
        let c = e2e_tests::contract::load(name);
        let version = c.doc["openapi"].as_str().unwrap_or_default();
        assert!(version.starts_with("3.1."), "{name}: openapi {version}");
        assert_eq!(c.doc["info"]["version"], "1.2.0", "{name}");
        let mut refs = Vec::new();
        references(&c.doc, &mut refs);
        assert!(!refs.is_empty(), "{name}");
        for r in &refs {
            assert!(c.resolve(r).is_some(), "{name}: dangling $ref {r}");
        }
        for (schema_name, schema) in c.doc["components"]["schemas"].as_object().unwrap() {
            c.validator(schema)
                .unwrap_or_else(|e| panic!("{name}: schema {schema_name} is invalid: {e}"));
        }
        let mut ids = BTreeSet::new();
        for (path, method) in c.operations() {
            let op = &c.doc["paths"][&path][method.to_lowercase()];
            let id = op["operationId"].as_str().unwrap_or_default();
            assert!(
                ids.insert(id.to_owned()),
                "{name}: operationId {id:?} repeats"
            );
            let statuses: Vec<&String> = op["responses"].as_object().unwrap().keys().collect();
            assert!(
                statuses.iter().any(|s| s.starts_with('2')),
                "{name}: {method} {path} documents no success: {statuses:?}"
            );
            for segment in path.split('/').filter(|s| s.starts_with('{')) {
                let param = segment.trim_matches(|c| c == '{' || c == '}');
                let declared = op["parameters"]
                    .as_array()
                    .is_some_and(|ps| ps.iter().any(|p| p["name"] == param && p["in"] == "path"));
                assert!(declared, "{name}: {method} {path} does not declare {param}");
            }
        }
    }
}

#[test]
fn every_route_a_component_serves_is_documented_and_nothing_else() {
    for name in DOCUMENTS {
        let served: BTreeSet<(String, String)> = route_table(name)
            .iter()
            .flat_map(|r| r.methods.iter().map(|m| (r.path.to_owned(), m.to_string())))
            .collect();
        let documented = e2e_tests::contract::load(name).operations();
        let missing: Vec<_> = served.difference(&documented).collect();
        let extra: Vec<_> = documented.difference(&served).collect();
        assert!(missing.is_empty(), "{name}.json lacks {missing:?}");
        assert!(extra.is_empty(), "{name}.json documents unserved {extra:?}");
    }
}

/// Sends requests to one service and validates every answer against its document.
struct Recorder {
    client: Client,
    contract: Contract,
    base: String,
    /// (METHOD, template or path, status) of every answer, for the coverage summary.
    seen: BTreeSet<(String, String, u16)>,
    failures: Vec<String>,
}

impl Recorder {
    fn new(name: &str, base: String) -> Self {
        Self {
            client: Client::new(),
            contract: e2e_tests::contract::load(name),
            base,
            seen: BTreeSet::new(),
            failures: Vec::new(),
        }
    }

    async fn call(
        &mut self,
        method: Method,
        target: &str,
        body: Option<Vec<u8>>,
        token: Option<&str>,
    ) -> Reply {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![("content-type", "application/json")];
        if let Some(a) = &auth {
            headers.push(("authorization", a.as_str()));
        }
        let url = format!("{}{target}", self.base);
        let reply = self.client.send(method.clone(), &url, body, &headers).await;
        let path = target.split('?').next().unwrap_or_default();
        if let Err(e) = self
            .contract
            .check(method.as_str(), path, reply.status, &reply.body)
        {
            self.failures.push(e);
        }
        self.seen
            .insert((method.to_string(), path.to_owned(), reply.status));
        reply
    }

    async fn json(
        &mut self,
        method: Method,
        target: &str,
        body: Value,
        token: Option<&str>,
    ) -> Reply {
        self.call(method, target, Some(body.to_string().into_bytes()), token)
            .await
    }

    async fn get(&mut self, target: &str) -> Reply {
        self.call(Method::GET, target, None, None).await
    }

    /// Asserts every answer validated.
    fn assert_valid(&self) {
        assert!(
            self.failures.is_empty(),
            "{}:\n{}",
            self.contract.name,
            self.failures.join("\n")
        );
    }

    /// Asserts every answer validated and every documented operation answered with a
    /// documented success at least once.
    fn finish(self) {
        let summary: Vec<String> = self
            .seen
            .iter()
            .map(|(m, p, s)| format!("{m} {p} {s}"))
            .collect();
        println!(
            "{}: {} answers validated:\n  {}",
            self.contract.name,
            summary.len(),
            summary.join("\n  ")
        );
        assert!(
            self.failures.is_empty(),
            "{}:\n{}",
            self.contract.name,
            self.failures.join("\n")
        );
        for (template, method) in self.contract.operations() {
            let answered = self.seen.iter().any(|(m, p, s)| {
                *m == method
                    && edge_api::routes::template_matches(&template, p)
                    && (200..300).contains(s)
            });
            assert!(
                answered,
                "{}: no successful {method} {template} was recorded",
                self.contract.name
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_answers_validate_against_chat_json() {
    let dir = temp_dir();
    let host = HostBuilder::new(component("chat"), dir.path())
        .variable("chat_admin_token", "secret")
        .start();
    let mut r = Recorder::new("chat", host.base_url());
    let t = Some("secret");
    let dialog = json!({"id": "oa-1", "chatName": "OpenAPI", "messages": [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi", "model": "m", "metadata": {"k": 1}}]});
    assert_eq!(
        r.json(Method::POST, "/api/chats", dialog.clone(), t)
            .await
            .status,
        201
    );
    assert_eq!(
        r.json(Method::POST, "/api/chats", dialog.clone(), t)
            .await
            .status,
        409
    );
    assert_eq!(
        r.json(Method::POST, "/api/chats", dialog.clone(), None)
            .await
            .status,
        401
    );
    assert_eq!(
        r.json(Method::POST, "/api/chats", dialog, Some("wrong"))
            .await
            .status,
        403
    );
    let bad = json!({"chatName": "x", "messages": [{"role": "wizard", "content": "?"}]});
    assert_eq!(r.json(Method::POST, "/api/chats", bad, t).await.status, 400);
    assert_eq!(
        r.call(Method::POST, "/api/chats", Some(b"{not json".to_vec()), t)
            .await
            .status,
        400
    );
    let huge = vec![b' '; 2 * 1024 * 1024];
    assert_eq!(
        r.call(Method::POST, "/api/chats", Some(huge), t)
            .await
            .status,
        413
    );
    assert_eq!(r.get("/api/chats").await.status, 200);
    let got = r.get("/api/dialog?id=oa-1").await;
    assert_eq!(got.status, 200);
    let guid = got.value()["GUID"].as_str().unwrap().to_owned();
    assert_eq!(r.get(&format!("/api/dialog?id={guid}")).await.status, 200);
    assert_eq!(r.get("/api/dialog").await.status, 400);
    assert_eq!(r.get("/api/dialog?id=nope").await.status, 404);
    let msg = json!({"role": "tool", "content": "42", "name": "calc"});
    assert_eq!(
        r.json(Method::POST, "/api/dialog/messages?id=oa-1", msg.clone(), t)
            .await
            .status,
        201
    );
    assert_eq!(
        r.json(Method::POST, "/api/dialog/messages?id=nope", msg, t)
            .await
            .status,
        404
    );
    assert_eq!(
        r.call(Method::PUT, "/api/chats", None, None).await.status,
        405
    );
    assert_eq!(
        r.call(Method::DELETE, "/api/dialog?id=oa-1", None, t)
            .await
            .status,
        200
    );
    assert_eq!(
        r.call(Method::DELETE, "/api/dialog?id=oa-1", None, t)
            .await
            .status,
        404
    );
    r.finish();
}

/// Every GET of interface B.
const MODEL_GETS: [&str; 8] = [
    "/health",
    "/capabilities",
    "/acceptable_ranges",
    "/info",
    "/citation",
    "/test_examples",
    "/metrics",
    "/openapi.json",
];

#[tokio::test(flavor = "multi_thread")]
async fn registry_and_model_answers_validate_against_their_documents() {
    let (rdir, mdir, sdir) = (temp_dir(), temp_dir(), temp_dir());
    let first = e2e_tests::port_block(3);
    let reg = HostBuilder::new(component("registry"), rdir.path())
        .variable("registry_ports", &format!("{first}-{}", first + 2))
        .variable("registry_maintenance_token", "maint")
        .start();
    let mut r = Recorder::new("registry", reg.base_url());

    // A model deployment registers with it and is checked against model.json.
    let mut model = HostBuilder::model(component("molprop"), mdir.path(), &reg.base_url())
        .arg("--allow-shutdown")
        .start();
    let mut m = Recorder::new("model", model.base_url());
    for path in MODEL_GETS {
        assert_eq!(m.get(path).await.status, 200, "{path}");
    }
    let predict = |text: &str, property: &str| json!({"input_type": "text", "data": {"text": text, "property": property}});
    assert_eq!(
        m.json(
            Method::POST,
            "/predict",
            predict("CC(=O)Oc1ccccc1C(=O)O", "all"),
            None
        )
        .await
        .status,
        200
    );
    let failed = m
        .json(Method::POST, "/predict", predict("C1CC", "logp"), None)
        .await;
    assert_eq!(
        (failed.status, failed.value()["success"].clone()),
        (200, json!(false))
    );
    assert_eq!(
        m.json(Method::POST, "/predict", predict("CCO", "colour"), None)
            .await
            .status,
        400
    );
    assert_eq!(
        m.json(Method::POST, "/predict", json!({"data": {}}), None)
            .await
            .status,
        400
    );
    assert_eq!(
        m.json(
            Method::POST,
            "/predict",
            json!({"input_type": "audio", "data": {}}),
            None
        )
        .await
        .status,
        400
    );
    assert_eq!(
        m.call(Method::POST, "/predict", Some(b"{".to_vec()), None)
            .await
            .status,
        400
    );
    assert_eq!(
        m.call(Method::GET, "/predict", None, None).await.status,
        405
    );
    assert_eq!(
        m.call(Method::POST, "/predict", Some(vec![b' '; 2 << 20]), None)
            .await
            .status,
        413
    );
    assert_eq!(m.get("/metrics").await.status, 200);

    // A component-served model refuses /shutdown with the error body.
    let served = HostBuilder::new(component("molprop"), sdir.path()).start();
    let mut s = Recorder::new("model", served.base_url());
    assert_eq!(
        s.call(Method::POST, "/shutdown", None, None).await.status,
        403
    );
    // /evidence: a model without any (404), and the ONNX classifier's confusion matrix.
    assert_eq!(s.get("/evidence").await.status, 404);
    let idir = temp_dir();
    let iris = HostBuilder::new(component("onnx-model"), idir.path())
        .shared_compile_cache()
        .mount(&e2e_tests::model_dir("iris"), "/model")
        .start();
    let mut i = Recorder::new("model", iris.base_url());
    assert_eq!(i.get("/evidence").await.status, 200);
    m.failures.append(&mut s.failures);
    m.seen.append(&mut s.seen);
    m.failures.append(&mut i.failures);
    m.seen.append(&mut i.seen);

    // The registry: registrations until the range is full, heartbeats, the listing, the
    // maintenance route, unregistration.
    let request = |model: &str, preferred: Value| {
        json!({"app_name": "openapi", "app_version": "1.2.0", "model_name": model,
        "process_id": std::process::id(), "preferred_port": preferred, "reason": "contract test", "metadata": {}})
    };
    let a = r
        .json(Method::POST, "/register", request("a", Value::Null), None)
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let b = r
        .json(
            Method::POST,
            "/register",
            request("b", json!(first + 2)),
            None,
        )
        .await;
    assert_eq!(b.status, 200, "{}", b.text());
    assert_eq!(
        r.json(Method::POST, "/register", request("c", Value::Null), None)
            .await
            .status,
        503
    );
    assert_eq!(
        r.json(Method::POST, "/register", json!({"app_name": "x"}), None)
            .await
            .status,
        400
    );
    assert_eq!(
        r.call(Method::POST, "/register", Some(b"[".to_vec()), None)
            .await
            .status,
        400
    );
    let (port, id) = (
        a.value()["assigned_port"].clone(),
        a.value()["registration_id"].clone(),
    );
    // Served without a host that knows the caller: renewal needs the id.
    assert_eq!(
        r.call(Method::POST, &format!("/heartbeat/{port}"), None, None)
            .await
            .status,
        403
    );
    let own = json!({"registration_id": id});
    assert_eq!(
        r.json(Method::POST, &format!("/heartbeat/{port}"), own, None)
            .await
            .status,
        200
    );
    // A retry from a caller not known to be the registering process: 409, no id.
    assert_eq!(
        r.json(Method::POST, "/register", request("a", Value::Null), None)
            .await
            .status,
        409
    );
    let wrong = json!({"registration_id": "00000000-0000-4000-8000-000000000000"});
    assert_eq!(
        r.json(Method::POST, &format!("/heartbeat/{port}"), wrong, None)
            .await
            .status,
        403
    );
    assert_eq!(
        r.call(Method::POST, "/heartbeat/1", None, None)
            .await
            .status,
        404
    );
    assert_eq!(
        r.call(Method::POST, "/heartbeat/port", None, None)
            .await
            .status,
        400
    );
    assert_eq!(r.get("/registry").await.status, 200);
    let report = json!({"alive": [{"port": port, "process_id": std::process::id()}], "dead": []});
    assert_eq!(
        r.json(
            Method::POST,
            "/registry/maintenance/processes",
            report.clone(),
            Some("maint")
        )
        .await
        .status,
        200
    );
    assert_eq!(
        r.json(
            Method::POST,
            "/registry/maintenance/processes",
            report.clone(),
            None
        )
        .await
        .status,
        401,
        "no token: 401, as the document's security scheme says"
    );
    assert_eq!(
        r.json(
            Method::POST,
            "/registry/maintenance/processes",
            report,
            Some("guess")
        )
        .await
        .status,
        403
    );
    assert_eq!(
        r.json(
            Method::POST,
            "/registry/maintenance/processes",
            json!({"zombies": []}),
            Some("maint")
        )
        .await
        .status,
        400
    );
    assert_eq!(
        r.get("/registry").await.status,
        200,
        "with process_alive set"
    );
    let unregister = |rid: &Value| {
        format!(
            "/unregister/{port}?registration_id={}",
            rid.as_str().unwrap()
        )
    };
    assert_eq!(
        r.call(Method::DELETE, &unregister(&json!("wrong")), None, None)
            .await
            .status,
        403
    );
    assert_eq!(
        r.call(Method::DELETE, &unregister(&id), None, None)
            .await
            .status,
        200
    );
    assert_eq!(
        r.call(Method::DELETE, &unregister(&id), None, None)
            .await
            .status,
        404
    );
    assert_eq!(
        r.call(Method::DELETE, &format!("/unregister/{port}"), None, None)
            .await
            .status,
        400
    );
    assert_eq!(
        r.call(Method::GET, "/register", None, None).await.status,
        405
    );

    // Last: the deployment that allows shutdown answers 200 and stops.
    assert_eq!(
        m.call(Method::POST, "/shutdown", None, None).await.status,
        200
    );
    assert!(model.wait(std::time::Duration::from_secs(10)).success());
    m.finish();
    r.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn onnx_model_answers_validate_against_model_json() {
    let cases = [
        (
            "solubility",
            "text",
            vec![
                json!({"text": "Cn1c(=O)c2c(ncn2C)n(C)c1=O"}),
                json!({"text": "[Fe+3].[Cl-].[Cl-].[Cl-]"}),
                json!({"text": "C1CC"}),
                json!({"text": 7}),
            ],
        ),
        (
            "iris",
            "tabular",
            vec![
                json!({"features": [5.1, 3.5, 1.4, 0.2]}),
                json!({"features": {"sepal_length_cm": 51, "sepal_width_cm": 3.5,
                                    "petal_length_cm": 1.4, "petal_width_cm": 0.2}}),
                json!({"features": [1]}),
                json!({}),
            ],
        ),
    ];
    for (name, input_type, data) in cases {
        let dir = temp_dir();
        let host = HostBuilder::new(component("onnx-model"), dir.path())
            .shared_compile_cache()
            .mount(&e2e_tests::model_dir(name), "/model")
            .start();
        let mut m = Recorder::new("model", host.base_url());
        for path in MODEL_GETS {
            assert_eq!(m.get(path).await.status, 200, "{name} {path}");
        }
        let mut statuses = Vec::new();
        for d in data {
            let body = json!({"input_type": input_type, "data": d});
            statuses.push(m.json(Method::POST, "/predict", body, None).await.status);
        }
        assert_eq!(
            statuses,
            [200, 200, if name == "iris" { 400 } else { 200 }, 400]
        );
        m.assert_valid();
    }
}
