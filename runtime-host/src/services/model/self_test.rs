//! A model's self-test, as every deployment runs it before it takes traffic (at start-up,
//! and for each new version `up` deploys): a loaded model that passes becomes a [`SelfTestPass`], which
//! knows what it registers as and can take an older version's place.

use crate::services::launch::Launch;
use crate::services::model::registration::{DeployOptions, Registry};
use anyhow::{Context, Result, bail};
use edge_api::model::{Capabilities, ModelInfo, SPEC_VERSION};
use edge_api::registry::RegistrationRequest;
use host_core::http::slot::ServerSlot;
use serde_json::json;
use std::path::Path;

/// Self-test runs before a model is declared failed, when it ran out of time or found the
/// host busy.
const SELF_TEST_ATTEMPTS: u32 = 3;

/// A self-test passed: the launched model, with what it says it is.
pub struct SelfTestPass {
    pub loaded: Launch,
    pub info: ModelInfo,
    pub caps: Capabilities,
}

impl SelfTestPass {
    /// [`self_test`] of `loaded`.
    pub async fn of(loaded: Launch, deadline: std::time::Duration) -> Result<Self> {
        let (info, caps) = self_test(&loaded, deadline).await?;
        tracing::info!(model = %info.name, "self-test passed");
        Ok(Self { loaded, info, caps })
    }
}

impl SelfTestPass {
    /// What this deployment registers: its name, process and capabilities, and (under
    /// `up`) its version. Registering it again from the same process renews the registration
    /// on the same port with this metadata (how an upgraded model reports its new version).
    pub fn registration(&self, opts: &DeployOptions, source: &Path) -> RegistrationRequest {
        let names: Vec<String> = self
            .caps
            .capabilities
            .iter()
            .map(|c| c.name.clone())
            .collect();
        let mut metadata = serde_json::Map::from_iter([
            (
                "model_type".to_owned(),
                json!(names.first().cloned().unwrap_or_default()),
            ),
            ("capabilities".to_owned(), json!(names)),
        ]);
        if let Some(v) = &opts.model_version {
            metadata.insert("model_version".to_owned(), json!(v));
        }
        RegistrationRequest {
            app_name: opts.app_name.clone(),
            app_version: SPEC_VERSION.into(),
            model_name: self.info.name.clone(),
            process_id: std::process::id(),
            preferred_port: opts.preferred_port,
            reason: format!("serving model {} from {}", self.info.name, source.display()),
            metadata,
        }
    }

    /// Takes the place of the version serving in `slot`, whose deployment registers with
    /// `opts` (an upgrade): same port, same registration, renewed with this version's
    /// metadata; requests in flight finish on the old version. It must be the same model.
    pub async fn take_over(
        self,
        slot: &ServerSlot,
        opts: &DeployOptions,
        source: &Path,
    ) -> Result<()> {
        // The registration is of a model name: a version must keep it.
        let serving = model_name(slot).await?;
        anyhow::ensure!(
            self.info.name == serving,
            "the new version is model `{}`, the deployment serves `{serving}`; a version must keep \
             its model's name (deploy another model under another file name instead)",
            self.info.name
        );
        slot.replace(self.loaded.server.clone());
        let request = self.registration(opts, source);
        if let Err(e) = Registry::new(&opts.registry, request).register(None).await {
            tracing::warn!(model = %self.info.name, error = %format!("{e:#}"), "upgraded, but the registry could not be told the new version");
        }
        Ok(())
    }
}

/// The model name the deployment in `slot` serves (its `/info`).
async fn model_name(slot: &ServerSlot) -> Result<String> {
    let (status, body) = slot.current().call("GET", "/info").await?;
    anyhow::ensure!(
        status == 200,
        "/info of the serving version answered {status}"
    );
    let info: edge_api::model::ModelInfo = serde_json::from_slice(&body)?;
    Ok(info.name)
}

/// The self-test of a loaded model: the model SDK's `/health` runs every test example
/// through `/predict`. A try that ran out of time or found the host busy (cores shared with
/// other start-ups) is repeated, twice, after 2 and 4 s; any other failure is final. Gives
/// the model's `/info` and `/capabilities` once it passed.
async fn self_test(
    loaded: &Launch,
    deadline: std::time::Duration,
) -> Result<(ModelInfo, Capabilities)> {
    let mut attempt = 1;
    let (status, body, answer) = loop {
        let health = loaded.server.call_within("GET", "/health", deadline);
        let (status, body) = health.await?;
        let answer = serde_json::from_slice::<serde_json::Value>(&body).ok();
        let code = answer
            .as_ref()
            .and_then(|v| v["error_code"].as_str().map(str::to_owned));
        let transient = matches!(code.as_deref(), Some("timeout" | "overloaded"));
        if !transient || attempt == SELF_TEST_ATTEMPTS {
            break (status, body, answer);
        }
        tracing::warn!(
            status,
            attempt,
            code,
            "the self-test did not finish; trying again"
        );
        tokio::time::sleep(std::time::Duration::from_secs(1 << attempt)).await;
        attempt += 1;
    };
    if status != 200 {
        // The error body's message (a bad model directory names the file and field there).
        let field = |k: &str| {
            answer
                .as_ref()
                .and_then(|v| v[k].as_str().map(str::to_owned))
        };
        let why = field("error").unwrap_or_else(|| String::from_utf8_lossy(&body).into_owned());
        let hint = match field("error_code").as_deref() {
            // A model that loads weights into every instance may need more than the default.
            Some("memory_limit_exceeded") => {
                "\nthe model needs more memory per instance: raise --max-memory-mib"
            }
            _ => "",
        };
        bail!("the model failed its self-test (/health answered {status}):\n{why}{hint}");
    }
    let info: ModelInfo = json_of(loaded, "/info").await?;
    let caps: Capabilities = json_of(loaded, "/capabilities").await?;
    Ok((info, caps))
}

async fn json_of<T: serde::de::DeserializeOwned>(loaded: &Launch, path: &str) -> Result<T> {
    let (status, body) = loaded.server.call("GET", path).await?;
    if status != 200 {
        bail!(
            "{path} answered {status}: {}",
            String::from_utf8_lossy(&body)
        );
    }
    serde_json::from_slice(&body).with_context(|| format!("{path} is not a v1.2 record"))
}
