//! Which model a request names: `GET /v1/models` (and `/v1/models/{id}`) lists the models this
//! host runs whose files are installed, and every endpoint finds its model here, so an
//! unknown name, a model of the other kind and one not installed get one answer each.

use super::reply::{answer, error};
use host_core::capabilities::llm::generator::Generator;
use host_core::capabilities::llm::{AiModels, catalogue, not_installed};
use host_core::http::responses::HostResponse;
use serde_json::{Value, json};

/// Who owns the models, as `/v1/models` says it: the host that runs them.
const OWNER: &str = "runtime-host";

/// The language model `name`, loaded on first use.
pub async fn language_model(models: &AiModels, name: &str) -> Result<Generator, HostResponse> {
    installed(models, name).map_err(|refused| *refused)?;
    if !AiModels::generates(name) {
        return Err(error(
            400,
            "model_not_supported",
            format!("`{name}` is an embedding model; it does not generate text"),
        ));
    }
    models
        .generator(name)
        .await
        .map_err(|why| error(500, "model_error", why))
}

/// Checks that `name` is an installed embedding model (the refusal boxed: an answer is large
/// beside `Ok`).
pub fn embedding_model(models: &AiModels, name: &str) -> Result<(), Box<HostResponse>> {
    installed(models, name)?;
    if AiModels::generates(name) {
        return Err(Box::new(error(
            400,
            "model_not_supported",
            format!("`{name}` is a language model; it makes no embeddings"),
        )));
    }
    Ok(())
}

/// 404 for a model this host does not run, or whose files are not in place (saying where
/// they go and how to put them there).
fn installed(models: &AiModels, name: &str) -> Result<(), Box<HostResponse>> {
    if catalogue::find(name).is_none() {
        let runs = catalogue::names();
        return Err(Box::new(error(
            404,
            "model_not_found",
            format!("this host runs no model `{name}`; it runs {runs}"),
        )));
    }
    if !models.installed(name) {
        let why = not_installed(name, &models.model_dir(name));
        return Err(Box::new(error(404, "model_not_installed", why)));
    }
    Ok(())
}

fn entry(name: &str) -> Value {
    json!({"id": name, "object": "model", "created": 0, "owned_by": OWNER})
}

/// `GET /v1/models`: every installed model.
pub fn list(models: &AiModels) -> HostResponse {
    let data: Vec<Value> = catalogue::ENGINES
        .iter()
        .filter(|e| models.installed(e.name))
        .map(|e| entry(e.name))
        .collect();
    answer(200, &json!({"object": "list", "data": data}))
}

/// `GET /v1/models/{id}`.
pub fn one(models: &AiModels, id: &str) -> HostResponse {
    match installed(models, id) {
        Ok(()) => answer(200, &entry(id)),
        Err(refused) => *refused,
    }
}
