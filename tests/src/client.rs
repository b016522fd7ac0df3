//! HTTP client for tests, with assertions on the error body.

use bytes::Bytes;
use edge_api::ErrorBody;
use http_body_util::{BodyExt, Full};
use hyper::Method;
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::de::DeserializeOwned;
use std::time::Duration;

#[derive(Clone)]
pub struct Client {
    inner: HyperClient<HttpConnector, Full<Bytes>>,
    /// How long one request may take to be answered before the test fails.
    timeout: Duration,
}

impl Default for Client {
    fn default() -> Self {
        Self::new()
    }
}

#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

impl Reply {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json<T: DeserializeOwned>(&self) -> T {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "HTTP {} body is not the expected JSON ({e}): {}",
                self.status,
                self.text()
            )
        })
    }

    pub fn value(&self) -> serde_json::Value {
        self.json()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts `status` and the exact error body shape with `code`; returns the body.
    pub fn assert_error(&self, status: u16, code: &str) -> ErrorBody {
        assert_eq!(
            self.status,
            status,
            "unexpected status; body: {}",
            self.text()
        );
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "error bodies are JSON"
        );
        let v = self.value();
        let obj = v.as_object().expect("error body is an object");
        assert_eq!(
            obj.len(),
            3,
            "error body has exactly success, error, error_code: {v}"
        );
        let body: ErrorBody = self.json();
        assert!(!body.success);
        assert!(!body.error.is_empty());
        assert_eq!(body.error_code, code, "body: {v}");
        body
    }
}

impl Client {
    pub fn new() -> Self {
        Self::waiting(Duration::from_secs(60))
    }

    /// A client that waits up to `timeout` for each answer: for a test whose requests may
    /// run longer than a minute on a loaded machine (and whose host's deadline allows it).
    pub fn waiting(timeout: Duration) -> Self {
        Self {
            inner: HyperClient::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(5))
                .build_http(),
            timeout,
        }
    }

    pub async fn send(
        &self,
        method: Method,
        url: &str,
        body: Option<Vec<u8>>,
        headers: &[(&str, &str)],
    ) -> Reply {
        self.try_send(method, url, body, headers)
            .await
            .unwrap_or_else(|e| panic!("request to {url} failed: {e}"))
    }

    pub async fn try_send(
        &self,
        method: Method,
        url: &str,
        body: Option<Vec<u8>>,
        headers: &[(&str, &str)],
    ) -> Result<Reply, String> {
        let mut req = hyper::Request::builder().method(method).uri(url);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| e.to_string())?;
        let resp = tokio::time::timeout(self.timeout, self.inner.request(req))
            .await
            .map_err(|_| format!("no answer within {:?}", self.timeout))?
            .map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok(Reply {
            status,
            headers,
            body,
        })
    }

    pub async fn get(&self, url: &str) -> Reply {
        self.send(Method::GET, url, None, &[]).await
    }

    pub async fn post_json(
        &self,
        url: &str,
        body: &serde_json::Value,
        token: Option<&str>,
    ) -> Reply {
        self.post_raw(url, serde_json::to_vec(body).unwrap(), token)
            .await
    }

    pub async fn post_raw(&self, url: &str, body: Vec<u8>, token: Option<&str>) -> Reply {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![("content-type", "application/json")];
        if let Some(a) = &auth {
            headers.push(("authorization", a.as_str()));
        }
        self.send(Method::POST, url, Some(body), &headers).await
    }

    pub async fn delete(&self, url: &str, token: Option<&str>) -> Reply {
        let auth = token.map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> =
            auth.iter().map(|a| ("authorization", a.as_str())).collect();
        self.send(Method::DELETE, url, None, &headers).await
    }
}
