//! Property-based: requests generated from the OpenAPI documents, valid and invalid, sent to
//! the real services. A request the document calls valid must get a documented status that
//! is neither 400 (unless its error is a rule the document states in prose) nor 5xx; one it
//! calls invalid (a body or query parameter the schema refuses) must get 400. Generation is
//! seeded, so every run sends the same requests; the JSON Schema validator is the judge of
//! what is valid, the generator only proposes.

use e2e_tests::contract::Contract;
use e2e_tests::{Client, Host, HostBuilder, component, temp_dir};
use hyper::Method;
use serde_json::{Map, Value, json};

const SEED: u64 = 0x5eed_0015;
/// Requests of each kind per operation.
const CASES: usize = 100;
const TOKEN: &str = "t0ken";
const MAINTENANCE: &str = "m41nt";

/// splitmix64: small, seeded, good enough to spread cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

/// Proposes values for schemas of one document.
struct Gen<'a> {
    contract: &'a Contract,
    rng: Rng,
}

impl Gen<'_> {
    fn deref<'s>(&'s self, mut s: &'s Value) -> &'s Value {
        while let Some(r) = s.get("$ref").and_then(Value::as_str) {
            s = self
                .contract
                .resolve(r)
                .expect("references resolve (tested elsewhere)");
        }
        s
    }

    fn pick<'v>(&mut self, items: &'v [Value]) -> &'v Value {
        &items[self.rng.below(items.len() as u64) as usize]
    }

    fn value(&mut self, schema: &Value, depth: u32) -> Value {
        let schema = self.deref(schema).clone();
        if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
            return self.pick(choices).clone();
        }
        if let Some(c) = schema.get("const") {
            return c.clone();
        }
        let kind = match &schema["type"] {
            Value::String(t) => t.clone(),
            Value::Array(ts) => {
                // Mostly the first (non-null) type; null now and then.
                let non_null: Vec<Value> = ts.iter().filter(|t| *t != "null").cloned().collect();
                if non_null.is_empty() || self.rng.below(5) == 0 {
                    self.pick(ts).as_str().unwrap_or("null").to_owned()
                } else {
                    self.pick(&non_null).as_str().unwrap().to_owned()
                }
            }
            _ if schema.get("properties").is_some() => "object".into(),
            _ => match schema.get("oneOf").or(schema.get("anyOf")) {
                Some(Value::Array(branches)) => {
                    let branch = self.pick(branches).clone();
                    return self.value(&branch, depth);
                }
                _ => "string".into(),
            },
        };
        match kind.as_str() {
            "null" => Value::Null,
            "boolean" => json!(self.rng.coin()),
            "integer" => {
                let lo = schema["minimum"].as_i64().unwrap_or(0);
                let hi = schema["maximum"]
                    .as_i64()
                    .unwrap_or(lo + 10_000)
                    .min(lo + 100_000);
                json!(lo + self.rng.below((hi - lo + 1) as u64) as i64)
            }
            "number" => json!(self.rng.below(100_000) as f64 / 100.0),
            "string" => json!(self.string(&schema)),
            "array" => {
                let lo = schema["minItems"].as_u64().unwrap_or(0);
                let hi = schema["maxItems"].as_u64().unwrap_or(3).min(lo + 3);
                let n = lo + self.rng.below(hi - lo + 1);
                let items = schema.get("items").cloned().unwrap_or(json!({}));
                Value::Array((0..n).map(|_| self.value(&items, depth + 1)).collect())
            }
            _ => self.object(&schema, depth),
        }
    }

    fn string(&mut self, schema: &Value) -> String {
        match schema["format"].as_str() {
            Some("uuid") => {
                let hex = format!("{:016x}{:016x}", self.rng.next(), self.rng.next());
                format!(
                    "{}-{}-4{}-a{}-{}",
                    &hex[..8],
                    &hex[8..12],
                    &hex[13..16],
                    &hex[17..20],
                    &hex[20..32]
                )
            }
            Some("date-time") => "2026-11-23T08:00:00Z".into(),
            _ => {
                const ALPHABET: &[u8] =
                    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
                let lo = schema["minLength"].as_u64().unwrap_or(0);
                let hi = schema["maxLength"].as_u64().unwrap_or(12).min(lo + 12);
                let n = lo.max(1) + self.rng.below(hi.saturating_sub(lo.max(1)) + 1);
                (0..n)
                    .map(|_| ALPHABET[self.rng.below(ALPHABET.len() as u64) as usize] as char)
                    .collect()
            }
        }
    }

    fn object(&mut self, schema: &Value, depth: u32) -> Value {
        let mut out = Map::new();
        let required: Vec<String> = schema["required"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(props) = schema["properties"].as_object() {
            for (name, prop) in props {
                if required.contains(name) || (depth < 3 && self.rng.coin()) {
                    out.insert(name.clone(), self.value(prop, depth + 1));
                }
            }
        }
        // anyOf/oneOf branches that require fields (a model's `data`): satisfy one.
        if let Some(Value::Array(branches)) = schema.get("anyOf").or(schema.get("oneOf")) {
            let branch = self.pick(branches).clone();
            for field in branch["required"].as_array().into_iter().flatten() {
                let field = field.as_str().unwrap();
                let prop = branch["properties"]
                    .get(field)
                    .or(schema["properties"].get(field))
                    .cloned()
                    .unwrap_or(json!({"type": "string"}));
                out.insert(field.to_owned(), self.value(&prop, depth + 1));
            }
        }
        Value::Object(out)
    }

    /// A change that should make `body` invalid against `schema` (the validator decides).
    fn break_body(&mut self, schema: &Value, body: &Value) -> Value {
        let schema = self.deref(schema).clone();
        let mut broken = body.clone();
        let Some(obj) = broken.as_object_mut() else {
            return json!("not an object");
        };
        let props: Vec<(String, Value)> = schema["properties"]
            .as_object()
            .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        match self.rng.below(4) {
            0 => {
                if let Some(req) = schema["required"].as_array().filter(|r| !r.is_empty()) {
                    obj.remove(self.pick(req).as_str().unwrap());
                }
            }
            1 if !props.is_empty() => {
                let (name, prop) = self.pick_pair(&props);
                let prop = self.deref(&prop).clone();
                let wrong = match prop["type"].as_str() {
                    Some("string") => json!(12345),
                    Some("integer" | "number") => json!("twelve"),
                    Some("array") => json!({"not": "a list"}),
                    Some("object") => json!(["not", "an", "object"]),
                    _ => json!({"nested": [true]}),
                };
                obj.insert(name, wrong);
            }
            2 => {
                obj.insert("no_such_field_in_the_document".into(), json!(1));
            }
            _ => {
                // A string past its maxLength, or below its minLength.
                for (name, prop) in &props {
                    let prop = self.deref(prop);
                    if let Some(max) = prop["maxLength"].as_u64().filter(|m| *m < 5000) {
                        obj.insert(name.clone(), json!("x".repeat(max as usize + 1)));
                        break;
                    }
                    if prop["minLength"].as_u64() == Some(1) {
                        obj.insert(name.clone(), json!(""));
                        break;
                    }
                }
            }
        }
        broken
    }

    fn pick_pair(&mut self, items: &[(String, Value)]) -> (String, Value) {
        items[self.rng.below(items.len() as u64) as usize].clone()
    }
}

/// One operation to exercise.
struct Op {
    method: Method,
    path: &'static str,
    /// Path with its parameters filled in.
    target: String,
    token: Option<&'static str>,
    /// Error texts of 400 answers the document states in prose for valid requests.
    prose_rules: &'static [&'static str],
}

async fn exercise(contract: &Contract, host: &Host, ops: Vec<Op>) {
    let c = Client::new();
    let mut proposer = Gen {
        contract,
        rng: Rng(SEED),
    };
    let mut failures = Vec::new();
    let mut counted = (0, 0);
    for op in ops {
        let item = &contract.doc["paths"][op.path][op.method.as_str().to_lowercase()];
        let documented: Vec<u16> = item["responses"]
            .as_object()
            .unwrap()
            .keys()
            .filter_map(|k| k.parse().ok())
            .collect();
        let body_schema = item
            .pointer("/requestBody/content/application~1json/schema")
            .cloned();
        let query: Vec<(String, Value)> = item["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["in"] == "query")
            .map(|p| (p["name"].as_str().unwrap().to_owned(), p["schema"].clone()))
            .collect();
        let required: Vec<bool> = item["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["in"] == "query")
            .map(|p| p["required"] == true)
            .collect();
        let body_validator = body_schema.as_ref().map(|s| contract.validator(s).unwrap());
        for case in 0..2 * CASES {
            let want_valid = case < CASES;
            // Query parameters: generated from their schemas (optional ones now and then left
            // out); an invalid case breaks one: a word for a number, an empty value where one
            // is required, or a required one left out.
            let mut params: Vec<(String, String)> = Vec::new();
            for ((n, s), required) in query.iter().zip(&required) {
                if *required || proposer.rng.coin() {
                    let v = proposer.value(s, 0);
                    params.push((n.clone(), v.as_str().map_or(v.to_string(), str::to_owned)));
                }
            }
            let mut body = body_schema.as_ref().map(|s| proposer.value(s, 0));
            let mut valid = true;
            if let (Some(b), Some(v)) = (&body, &body_validator) {
                valid = v.is_valid(b);
            }
            if !want_valid {
                let break_query = body.is_none() || (!params.is_empty() && proposer.rng.coin());
                if break_query && !params.is_empty() {
                    let i = proposer.rng.below(params.len() as u64) as usize;
                    let q = query.iter().position(|(n, _)| *n == params[i].0).unwrap();
                    let schema = &query[q].1;
                    let min = schema["minLength"].as_u64().unwrap_or(0);
                    if schema["type"] == "integer" {
                        params[i].1 = "many".to_owned();
                    } else if min >= 1 && (proposer.rng.coin() || !required[q]) {
                        params[i].1 = String::new();
                    } else if required[q] {
                        params.remove(i);
                    } else {
                        continue; // an optional free-form value: nothing to break
                    }
                    valid = false;
                } else if let (Some(schema), Some(b)) = (&body_schema, &body) {
                    let broken = proposer.break_body(schema, b);
                    valid = body_validator.as_ref().unwrap().is_valid(&broken);
                    body = Some(broken);
                }
            }
            if valid != want_valid {
                continue; // the generator proposed something else; the judge said no
            }
            let query_string: Vec<String> = params
                .iter()
                .map(|(k, v)| format!("{k}={}", service_client::percent_encode(v)))
                .collect();
            let url = if query_string.is_empty() {
                host.url(&op.target)
            } else {
                host.url(&format!("{}?{}", op.target, query_string.join("&")))
            };
            let auth = op.token.map(|t| format!("Bearer {t}"));
            let mut headers = vec![("content-type", "application/json")];
            if let Some(a) = &auth {
                headers.push(("authorization", a));
            }
            let r = c
                .send(
                    op.method.clone(),
                    &url,
                    body.as_ref().map(|b| b.to_string().into_bytes()),
                    &headers,
                )
                .await;
            let what = format!(
                "{} {url} {}",
                op.method,
                body.map(|b| b.to_string()).unwrap_or_default()
            );
            if valid {
                counted.0 += 1;
                let prose = r.status == 400 && op.prose_rules.iter().any(|p| r.text().contains(p));
                if r.status >= 500 || (r.status == 400 && !prose) || !documented.contains(&r.status)
                {
                    failures.push(format!("valid {what} -> {} {}", r.status, r.text()));
                }
            } else {
                counted.1 += 1;
                if r.status != 400 {
                    failures.push(format!("invalid {what} -> {} {}", r.status, r.text()));
                }
            }
        }
    }
    println!(
        "{}: {} valid and {} invalid generated requests",
        contract.name, counted.0, counted.1
    );
    assert!(
        counted.0 > 0 && counted.1 > 0,
        "the generator produced cases"
    );
    assert!(
        failures.is_empty(),
        "{}:\n{}",
        contract.name,
        failures.join("\n")
    );
}

fn op(method: Method, path: &'static str, token: Option<&'static str>) -> Op {
    Op {
        method,
        path,
        target: path.to_owned(),
        token,
        prose_rules: &[],
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_answers_generated_requests_as_its_document_says() {
    let dir = temp_dir();
    let host = HostBuilder::new(component("chat"), dir.path())
        .variable("chat_admin_token", TOKEN)
        .start();
    let contract = e2e_tests::contract::load("chat");
    let mut create = op(Method::POST, "/api/chats", Some(TOKEN));
    create.prose_rules = &["duplicate"];
    exercise(
        &contract,
        &host,
        vec![
            op(Method::GET, "/api/chats", None),
            create,
            op(Method::GET, "/api/dialog", None),
            op(Method::POST, "/api/dialog/messages", Some(TOKEN)),
            op(Method::DELETE, "/api/dialog", Some(TOKEN)),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn registry_answers_generated_requests_as_its_document_says() {
    let dir = temp_dir();
    // The component served directly, so the test knows the maintenance route's secret
    // (`runtime-host registry` makes a fresh one at each start).
    let host = HostBuilder::new(component("registry"), dir.path())
        .variable("registry_maintenance_token", MAINTENANCE)
        .start();
    let contract = e2e_tests::contract::load("registry");
    let with_port = |method, path: &'static str, target: &str| Op {
        target: target.to_owned(),
        ..op(method, path, None)
    };
    exercise(
        &contract,
        &host,
        vec![
            op(Method::POST, "/register", None),
            with_port(Method::POST, "/heartbeat/{port}", "/heartbeat/5100"),
            with_port(Method::DELETE, "/unregister/{port}", "/unregister/5101"),
            op(Method::GET, "/registry", None),
            op(
                Method::POST,
                "/registry/maintenance/processes",
                Some(MAINTENANCE),
            ),
        ],
    )
    .await;
    // Without the secret, the route refuses before it reads the body, as documented: 401
    // with no token (the security scheme), 403 with a wrong one.
    let r = Client::new()
        .post_raw(
            &host.url("/registry/maintenance/processes"),
            b"{}".to_vec(),
            None,
        )
        .await;
    r.assert_error(401, "unauthorized");
    let r = Client::new()
        .post_raw(
            &host.url("/registry/maintenance/processes"),
            b"{}".to_vec(),
            Some("guess"),
        )
        .await;
    r.assert_error(403, "forbidden");
}

/// `/predict` of a model deployment, judged by the document it serves itself.
async fn exercise_model(name: &str, host: &Host) {
    let doc = Client::new().get(&host.url("/openapi.json")).await.value();
    let contract = Contract::from_value(&format!("{name} /openapi.json"), doc);
    let mut predict = op(Method::POST, "/predict", None);
    // Its document says `text` and `smiles` must be equal when both are given.
    predict.prose_rules = &["differs from data.text"];
    exercise(&contract, host, vec![predict]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn models_answer_generated_requests_as_their_own_documents_say() {
    let dirs = [temp_dir(), temp_dir()];
    let molprop = HostBuilder::new(component("molprop"), dirs[0].path()).start();
    exercise_model("molprop", &molprop).await;
    let iris = HostBuilder::new(component("onnx-model"), dirs[1].path())
        .shared_compile_cache()
        .mount(&e2e_tests::model_dir("iris"), "/model")
        .start();
    exercise_model("iris", &iris).await;
}
