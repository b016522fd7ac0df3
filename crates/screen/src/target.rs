//! The deployment rows are sent to: what it takes (from `/capabilities` and its own
//! `/openapi.json`) and the `/predict` calls, in batches where it takes them.

use crate::input::{Payload, Row};
use crate::output::Outcome;
use anyhow::{Context, Result, bail};
use hyper::Method;
use serde_json::{Map, Value, json};
use service_client::HttpClient;
use std::time::Duration;

/// What the deployment told us about itself.
#[derive(Debug, Clone)]
pub struct Target {
    pub url: String,
    pub model: String,
    pub takes_text: bool,
    pub takes_tabular: bool,
    /// Most items one batch may hold for each input kind, from the deployment's document;
    /// `None`: it takes no batches (one input per request).
    pub max_texts: Option<usize>,
    pub max_rows: Option<usize>,
    /// The feature names a tabular model documents, in order.
    pub features: Vec<String>,
    /// The result fields its capabilities list.
    pub output_fields: Vec<String>,
}

impl Target {
    /// The model at base URL `url` (`http://127.0.0.1:3000/models/molprop`): what it takes
    /// and answers, from its `/capabilities` and `/info`.
    pub async fn discover(client: &HttpClient, url: &str) -> Result<Self> {
        let url = url.trim_end_matches('/').to_owned();
        // The URL names the model, not one of its endpoints: `.../predict` is a common slip.
        if let Some(base) = edge_api::model::ROUTES
            .iter()
            .find_map(|r| url.strip_suffix(r.path))
        {
            bail!(
                "--url {url} names an endpoint; give the model's base URL, without `{}`: \
                 --url {base}",
                &url[base.len()..]
            );
        }
        let get = |path: &'static str| {
            let full = format!("{url}{path}");
            async move {
                let reply = client.send(Method::GET, &full, None, None).await.with_context(|| {
                    format!("cannot reach the model at {full}: is it running? (`runtime-host up` serves each model under /models/<name>)")
                })?;
                if reply.status != 200 {
                    bail!(
                        "{full} answered HTTP {}: {}",
                        reply.status,
                        reply.error_text()
                    );
                }
                reply.json::<Value>()
            }
        };
        let capabilities = get("/capabilities").await?;
        let model = capabilities["model"]
            .as_str()
            .unwrap_or("the model")
            .to_owned();
        let list = capabilities["capabilities"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let types: Vec<&str> = list
            .iter()
            .flat_map(|c| c["input_types"].as_array().into_iter().flatten())
            .filter_map(Value::as_str)
            .collect();
        let mut output_fields: Vec<String> = Vec::new();
        for key in list.iter().flat_map(|c| {
            c["output_schema"]
                .as_object()
                .into_iter()
                .flat_map(|o| o.keys())
        }) {
            if !output_fields.contains(key) {
                output_fields.push(key.clone());
            }
        }
        // The document is optional (not every v1.2 deployment serves one): without it, one
        // input per request.
        let document = get("/openapi.json").await.unwrap_or(Value::Null);
        Ok(Self {
            url,
            model,
            takes_text: types.contains(&"text"),
            takes_tabular: types.contains(&"tabular"),
            max_texts: max_items(&document, "texts"),
            max_rows: max_items(&document, "rows"),
            features: feature_names(&document),
            output_fields,
        })
    }

    /// Most items per request for this kind of input (1: no batches).
    pub fn max_batch(&self, text: bool) -> usize {
        if text { self.max_texts } else { self.max_rows }.unwrap_or(1)
    }
}

/// The `maxItems` of a batch list `field` anywhere in the document.
fn max_items(document: &Value, field: &str) -> Option<usize> {
    match document {
        Value::Object(map) => {
            if let Some(max) = map
                .get("properties")
                .and_then(|p| p.get(field))
                .and_then(|f| f.get("maxItems"))
                .and_then(Value::as_u64)
            {
                return Some(max as usize);
            }
            map.values().find_map(|v| max_items(v, field))
        }
        Value::Array(list) => list.iter().find_map(|v| max_items(v, field)),
        _ => None,
    }
}

/// The properties of the first `features` object schema in the document (the schema may
/// offer the object beside other forms in `oneOf`/`anyOf`).
fn feature_names(document: &Value) -> Vec<String> {
    fn object_form(schema: &Value) -> Option<Vec<String>> {
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            return Some(props.keys().cloned().collect());
        }
        ["oneOf", "anyOf"]
            .iter()
            .filter_map(|k| schema.get(*k).and_then(Value::as_array))
            .flatten()
            .find_map(object_form)
    }
    fn find(v: &Value) -> Option<Vec<String>> {
        match v {
            Value::Object(map) => {
                if let Some(features) = map.get("properties").and_then(|p| p.get("features")) {
                    return object_form(features);
                }
                map.values().find_map(find)
            }
            Value::Array(list) => list.iter().find_map(find),
            _ => None,
        }
    }
    find(document).unwrap_or_default()
}

/// Sends batches to a target and reads the answers, row by row.
pub struct Sender {
    pub client: HttpClient,
    pub target: Target,
    /// Fields every request's `data` carries beside the inputs (`--data property=logp`).
    pub shared: Map<String, Value>,
    pub text: bool,
}

/// Tries of a request the deployment could not take (connection refused, 503 overloaded),
/// with waits doubling from 200 ms: about 25 s in all before the run stops.
const TRIES: u32 = 8;

/// Why the run must stop (the rows of the batch are not written: `--resume` redoes them).
#[derive(Debug)]
pub struct Fatal(pub String);

impl Sender {
    /// The outcome of every row of `batch`, in order. Rows that could not be read are not
    /// sent; items a batch did not reach within the model's time budget are sent again.
    pub async fn predict(&self, batch: &[Row]) -> Result<Vec<Outcome>, Fatal> {
        let mut outcomes: Vec<Option<Outcome>> = batch
            .iter()
            .map(|row| match &row.payload {
                Payload::Unreadable(why) => Some(Outcome::failed(why.clone())),
                _ => None,
            })
            .collect();
        let mut pending: Vec<usize> = (0..batch.len())
            .filter(|&i| outcomes[i].is_none())
            .collect();
        let mut rounds = 0;
        while !pending.is_empty() {
            rounds += 1;
            let answers = if self.target.max_batch(self.text) > 1 {
                self.send_batch(batch, &pending).await?
            } else {
                let mut answers = Vec::new();
                for &i in &pending {
                    answers.push(self.send_one(&batch[i]).await?);
                }
                answers
            };
            let mut again = Vec::new();
            for (&i, answer) in pending.iter().zip(answers) {
                let budget = answer
                    .error
                    .as_deref()
                    .is_some_and(|e| e.starts_with("not computed"));
                if budget && rounds < 4 {
                    again.push(i);
                } else {
                    outcomes[i] = Some(answer);
                }
            }
            pending = again;
        }
        Ok(outcomes
            .into_iter()
            .map(|o| o.unwrap_or_else(|| Outcome::failed("no answer")))
            .collect())
    }

    fn input(row: &Row) -> Value {
        match &row.payload {
            Payload::Text(t) => json!(t),
            Payload::Features(f) => Value::Object(f.clone()),
            Payload::Unreadable(_) => Value::Null,
        }
    }

    async fn send_batch(&self, batch: &[Row], which: &[usize]) -> Result<Vec<Outcome>, Fatal> {
        let (many, input_type) = if self.text {
            ("texts", "text")
        } else {
            ("rows", "tabular")
        };
        let mut data = self.shared.clone();
        data.insert(
            many.into(),
            which.iter().map(|&i| Self::input(&batch[i])).collect(),
        );
        let body = json!({"input_type": input_type, "data": data});
        let answer = self.post(&body).await?;
        if answer.0 == 413 && which.len() > 1 {
            // Over the body cap: in halves.
            let (a, b) = which.split_at(which.len() / 2);
            let mut first = Box::pin(self.send_batch(batch, a)).await?;
            first.extend(Box::pin(self.send_batch(batch, b)).await?);
            return Ok(first);
        }
        if answer.0 == 413 {
            // One row the deployment will not take, however it is sent: it fails alone.
            let why = answer.1.get("error").and_then(Value::as_str).unwrap_or("");
            return Ok(vec![Outcome::failed(format!(
                "the row is too large for the deployment (HTTP 413: {why})"
            ))]);
        }
        let items = answer.1["results"]["items"].as_array();
        match items {
            Some(items) if answer.0 == 200 && items.len() == which.len() => {
                Ok(items.iter().map(item_outcome).collect())
            }
            _ => Err(Fatal(format!(
                "the model refused a batch of {} rows (HTTP {}): {}; check --data and the input column",
                which.len(),
                answer.0,
                answer
                    .1
                    .get("error")
                    .and_then(Value::as_str)
                    .map_or_else(|| answer.1.to_string(), str::to_owned)
            ))),
        }
    }

    async fn send_one(&self, row: &Row) -> Result<Outcome, Fatal> {
        let (one, input_type) = if self.text {
            ("text", "text")
        } else {
            ("features", "tabular")
        };
        let mut data = self.shared.clone();
        data.insert(one.into(), Self::input(row));
        let (status, body) = self
            .post(&json!({"input_type": input_type, "data": data}))
            .await?;
        Ok(match status {
            200 => item_outcome(&body),
            _ => Outcome::failed(
                body.get("error")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("HTTP {status}"), str::to_owned),
            ),
        })
    }

    /// One POST, tried again while the deployment cannot take it.
    async fn post(&self, body: &Value) -> Result<(u16, Value), Fatal> {
        let url = format!("{}/predict", self.target.url);
        let bytes = serde_json::to_vec(body).map_err(|e| Fatal(e.to_string()))?;
        let mut wait = Duration::from_millis(200);
        let mut last = String::new();
        for _ in 0..TRIES {
            match self
                .client
                .send(Method::POST, &url, Some(bytes.clone()), None)
                .await
            {
                Ok(reply) if reply.status != 503 && reply.status != 502 && reply.status != 504 => {
                    let value = serde_json::from_slice(&reply.body)
                        .unwrap_or_else(|_| json!({"error": String::from_utf8_lossy(&reply.body)}));
                    return Ok((reply.status, value));
                }
                Ok(reply) => last = format!("HTTP {}: {}", reply.status, reply.error_text()),
                Err(e) => last = format!("{e:#}"),
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(8));
        }
        Err(Fatal(format!(
            "{url} did not take the request after {TRIES} tries: {last}"
        )))
    }
}

/// One answer (a batch item, or a single prediction response) as an outcome.
fn item_outcome(item: &Value) -> Outcome {
    if item["success"] == json!(true) {
        let results = match &item["results"] {
            Value::Object(map) => map.clone(),
            other => Map::from_iter([("result".to_owned(), other.clone())]),
        };
        Outcome {
            results: Some(results),
            error: None,
        }
    } else {
        Outcome::failed(
            item["error_message"]
                .as_str()
                .or(item["error"].as_str())
                .unwrap_or("failed without a message"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_limits_and_features_come_from_the_document() {
        let doc = json!({"components": {"schemas": {"PredictionRequest": {"properties": {"data": {"anyOf": [
            {"properties": {"features": {"oneOf": [
                {"type": "object", "properties": {"a": {}, "b": {}}},
                {"type": "array"}
            ]}}},
            {"properties": {"rows": {"type": "array", "maxItems": 500}}}
        ]}}}}}});
        assert_eq!(max_items(&doc, "rows"), Some(500));
        assert_eq!(max_items(&doc, "texts"), None);
        assert_eq!(feature_names(&doc), vec!["a", "b"]);
    }

    #[test]
    fn answers_become_outcomes() {
        let ok = item_outcome(
            &json!({"success": true, "results": {"prediction": 1.5, "in_domain": false}}),
        );
        assert_eq!(ok.in_domain(), Some(false));
        let bad =
            item_outcome(&json!({"success": false, "results": {}, "error_message": "bad SMILES"}));
        assert_eq!(bad.error.as_deref(), Some("bad SMILES"));
        assert_eq!(bad.in_domain(), None);
    }
}
