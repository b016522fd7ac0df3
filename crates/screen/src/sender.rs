//! The `/predict` calls: a batch of rows sent as one request where the deployment takes
//! batches (halved when its body cap refuses it), else one request a row; each row's answer
//! becomes its outcome. Files are read and base64-encoded only when their batch goes, so no
//! more than the batches in flight are held in memory.

use crate::input::{Payload, Row};
use crate::output::Outcome;
use crate::target::{Input, Target};
use base64::Engine;
use hyper::Method;
use serde_json::{Map, Value, json};
use service_client::HttpClient;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Sends batches to a target and reads the answers, row by row.
pub struct Sender {
    pub client: HttpClient,
    pub target: Target,
    /// Fields every request's `data` carries beside the inputs (`--data property=logp`).
    pub shared: Map<String, Value>,
    pub input: Input,
    /// Bytes of input per request the batches aim at: lowered when the deployment's body
    /// cap refuses a batch, so the batches after it fit at once.
    pub budget: Arc<AtomicUsize>,
}

/// The largest file sent: a model's body cap is its manifest's `max_bytes` in base64, which
/// is 10 MiB by default, so a file this large is never taken; it fails alone unread.
const MAX_FILE_BYTES: u64 = 64 << 20;

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
        let mut outcomes: Vec<Option<Outcome>> = vec![None; batch.len()];
        let mut inputs = Vec::with_capacity(batch.len());
        for (row, outcome) in batch.iter().zip(&mut outcomes) {
            inputs.push(match Self::input(row).await {
                Ok(value) => value,
                Err(why) => {
                    *outcome = Some(Outcome::failed(why));
                    Value::Null
                }
            });
        }
        let mut pending: Vec<usize> = (0..batch.len())
            .filter(|&i| outcomes[i].is_none())
            .collect();
        let mut rounds = 0;
        while !pending.is_empty() {
            rounds += 1;
            let answers = if self.target.max_batch(self.input) > 1 {
                self.send_batch(&inputs, &pending).await?
            } else {
                let mut answers = Vec::new();
                for &i in &pending {
                    answers.push(self.send_one(&inputs[i]).await?);
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

    /// What a row sends: its text, features or URL, or its file in base64; `Err`: why it
    /// cannot be sent (the row's error).
    async fn input(row: &Row) -> Result<Value, String> {
        Ok(match &row.payload {
            Payload::Text(t) | Payload::Url(t) => json!(t),
            Payload::Features(f) => Value::Object(f.clone()),
            Payload::File { path, bytes } if *bytes > MAX_FILE_BYTES => {
                return Err(format!(
                    "the file is {bytes} bytes, over the {} MiB a request can carry",
                    MAX_FILE_BYTES >> 20
                ));
            }
            Payload::File { path, .. } => {
                let bytes = tokio::fs::read(path)
                    .await
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                json!(base64::engine::general_purpose::STANDARD.encode(bytes))
            }
            Payload::Unreadable(why) => return Err(why.clone()),
        })
    }

    async fn send_batch(&self, inputs: &[Value], which: &[usize]) -> Result<Vec<Outcome>, Fatal> {
        let (_, many) = self.input.fields();
        let mut data = self.shared.clone();
        data.insert(
            many.into(),
            which.iter().map(|&i| inputs[i].clone()).collect(),
        );
        let body = json!({"input_type": self.input.input_type(), "data": data});
        let answer = self.post(&body).await?;
        if answer.0 == 413 && which.len() > 1 {
            // Over the body cap: in halves, and the batches to come no larger.
            let sent: usize = which.iter().map(|&i| size_of(&inputs[i])).sum();
            self.budget.fetch_min(sent / 2, Ordering::SeqCst);
            let (a, b) = which.split_at(which.len() / 2);
            let mut first = Box::pin(self.send_batch(inputs, a)).await?;
            first.extend(Box::pin(self.send_batch(inputs, b)).await?);
            return Ok(first);
        }
        if answer.0 == 413 {
            // One row the deployment will not take, however it is sent: it fails alone.
            let why = answer.1.get("error").and_then(Value::as_str).unwrap_or("");
            return Ok(vec![Outcome::failed(format!(
                "the row is too large for the deployment (HTTP 413: {why})"
            ))]);
        }
        if answer.0 == 500 {
            // A fault in the deployment (a row that ran it out of memory or time): in halves
            // down to that row, which fails alone, so one hostile file cannot stop the run
            // (nor a resumed run, which would send the same batch again).
            if which.len() > 1 {
                let (a, b) = which.split_at(which.len() / 2);
                let mut first = Box::pin(self.send_batch(inputs, a)).await?;
                first.extend(Box::pin(self.send_batch(inputs, b)).await?);
                return Ok(first);
            }
            let why = answer.1.get("error").and_then(Value::as_str).unwrap_or("");
            let code = answer
                .1
                .get("error_code")
                .and_then(Value::as_str)
                .unwrap_or("");
            return Ok(vec![Outcome::failed(format!(
                "the deployment failed on this row (HTTP 500 {code}: {why})"
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

    async fn send_one(&self, input: &Value) -> Result<Outcome, Fatal> {
        let (one, _) = self.input.fields();
        let mut data = self.shared.clone();
        data.insert(one.into(), input.clone());
        let (status, body) = self
            .post(&json!({"input_type": self.input.input_type(), "data": data}))
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

/// About the bytes `value` takes in a request body.
fn size_of(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len() + 4,
        other => other.to_string().len(),
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
