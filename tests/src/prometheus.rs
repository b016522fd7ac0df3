//! A real Prometheus server (Debian's `prometheus` package) scraping the given targets every
//! second, queried over its HTTP API with PromQL. Without the program the test is skipped,
//! loudly, unless `cargo xtask test` could install it, which makes a missing program a failure
//! ([`crate::tools::require_or_skip`]).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Prometheus {
    child: Child,
    port: u16,
    _data: tempfile::TempDir,
}

impl Prometheus {
    /// Prometheus scraping `targets` (`host:port`, path `/metrics`) as job `runtime-host`,
    /// or `None` where it is not installed.
    pub fn start(test: &str, targets: &[String]) -> Option<Self> {
        let program =
            std::env::var("E2E_PROMETHEUS").unwrap_or_else(|_| "/usr/bin/prometheus".into());
        let installed = Some(program).filter(|p| std::path::Path::new(p).is_file());
        let program =
            crate::tools::require_or_skip(crate::tools::Tool::Prometheus, test, installed)?;
        let data = crate::temp_dir();
        let list: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
        let config = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: runtime-host\n    static_configs:\n      - targets: [{}]\n",
            list.join(", ")
        );
        let config_file = data.path().join("prometheus.yml");
        std::fs::write(&config_file, config).unwrap();
        let port = crate::free_port();
        let child = Command::new(program)
            .arg(format!("--config.file={}", config_file.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                data.path().join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting prometheus");
        Some(Self {
            child,
            port,
            _data: data,
        })
    }

    /// The series an instant query returns (any number), failing the test if Prometheus
    /// refuses the expression.
    pub async fn query_all(&self, promql: &str) -> Vec<serde_json::Value> {
        let v = self.api_query(promql).await.expect("Prometheus answers");
        v["data"]["result"].as_array().cloned().unwrap_or_default()
    }

    /// The API's answer to `promql`; `None` while Prometheus is not listening yet or still
    /// starting (it answers a plain-text 503 "Service Unavailable" until its storage is open,
    /// which a fast first query once met on CI).
    async fn api_query(&self, promql: &str) -> Option<serde_json::Value> {
        let url = format!("http://127.0.0.1:{}/api/v1/query", self.port);
        let body = format!("query={}", service_client::percent_encode(promql)).into_bytes();
        let reply = crate::Client::new()
            .try_send(
                hyper::Method::POST,
                &url,
                Some(body),
                &[("content-type", "application/x-www-form-urlencoded")],
            )
            .await
            .ok()?;
        if reply.status == 503 {
            return None;
        }
        let v = reply.value();
        assert_eq!(v["status"], "success", "{promql}: {v}");
        Some(v)
    }

    /// The value of an instant query that returns one series, `None` if it returns none.
    pub async fn query(&self, promql: &str) -> Option<f64> {
        let v = self.api_query(promql).await?;
        let result = v["data"]["result"].as_array()?;
        assert!(result.len() <= 1, "{promql} returned several series: {v}");
        result.first()?["value"][1].as_str()?.parse().ok()
    }

    /// Polls `promql` until `accept` takes its value (Prometheus scrapes every second), and
    /// returns that value; panics with the last value after `timeout`.
    pub async fn eventually(
        &self,
        promql: &str,
        timeout: Duration,
        accept: impl Fn(f64) -> bool,
    ) -> f64 {
        let started = Instant::now();
        loop {
            let value = self.query(promql).await;
            if let Some(v) = value.filter(|v| accept(*v)) {
                return v;
            }
            assert!(
                started.elapsed() < timeout,
                "{promql} was {value:?} after {timeout:?}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
