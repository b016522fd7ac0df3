//! Answers recorded from a real service and checked against its OpenAPI document.

use e2e_tests::contract::Contract;
use e2e_tests::{Client, Reply};
use hyper::Method;
use serde_json::Value;
use std::collections::BTreeSet;

/// Sends requests to one service and validates every answer against its document.
pub struct Recorder {
    client: Client,
    contract: Contract,
    base: String,
    /// (METHOD, template or path, status) of every answer, for the coverage summary.
    seen: BTreeSet<(String, String, u16)>,
    failures: Vec<String>,
}

impl Recorder {
    pub fn new(name: &str, base: String) -> Self {
        Self {
            client: Client::new(),
            contract: e2e_tests::contract::load(name),
            base,
            seen: BTreeSet::new(),
            failures: Vec::new(),
        }
    }

    pub async fn call(
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

    pub async fn json(
        &mut self,
        method: Method,
        target: &str,
        body: Value,
        token: Option<&str>,
    ) -> Reply {
        self.call(method, target, Some(body.to_string().into_bytes()), token)
            .await
    }

    pub async fn get(&mut self, target: &str) -> Reply {
        self.call(Method::GET, target, None, None).await
    }

    /// Takes over what `other` (another deployment of the same document) recorded, so that
    /// [`Recorder::finish`] counts the operations only it answered.
    pub fn absorb(&mut self, mut other: Recorder) {
        self.failures.append(&mut other.failures);
        self.seen.append(&mut other.seen);
    }

    /// Asserts every answer validated.
    pub fn assert_valid(&self) {
        assert!(
            self.failures.is_empty(),
            "{}:\n{}",
            self.contract.name,
            self.failures.join("\n")
        );
    }

    /// Asserts every answer validated and every documented operation answered with a
    /// documented success at least once.
    pub fn finish(self) {
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
