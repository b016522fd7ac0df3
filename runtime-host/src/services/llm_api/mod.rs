//! The host's language and embedding models over HTTP, on `up`'s app port: OpenAI's
//! `POST /v1/chat/completions` (streamed too), `POST /v1/embeddings` and `GET /v1/models`
//! for OpenAI's clients, and Spin's remote protocol (`POST /infer`, `POST /embed`) for a
//! `spin up` whose runtime configuration sends its LLM calls here. They run the models the
//! process has loaded for its components (one copy of the weights; the generator's queue
//! bounds the work: past it, 503 with `Retry-After`).
//!
//! These endpoints spend CPU for whoever calls them, so every call needs `Authorization:
//! Bearer <token>` (`$UP_LLM_API_TOKEN`, else the file `llm_api_token` of the data
//! directory): a token of its own, so a client of the model (a Spin app's runtime
//! configuration, say) holds no admin rights. A page of another origin cannot post here (the
//! guard refuses it before any route, as everywhere on the host); bodies are capped.

mod chat;
mod embeddings;
mod models;
mod reply;
mod spin_remote;
mod sse;

#[cfg(test)]
mod tests;

use chat::{ChatRequest, Meta};
use host_core::capabilities::llm::generator::{Event, MAX_NEW_TOKENS, Prompt, Request, Stream};
use host_core::capabilities::llm::{AiModels, catalogue};
use host_core::http::responses::HostResponse;
use host_core::http::router::HostRoute;
use host_core::support::token::{Admission, Token};
use hyper::Method;
use hyper::body::Incoming;
use reply::{error, not_allowed, read_json, refused};
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

/// The paths answered, as Spin routes (Spin's client keeps only the origin of the URL it is
/// given, so its two paths sit at the root).
pub const ROUTES: &[&str] = &["/v1/...", "/infer", "/embed"];

/// The environment variable and data-directory file the token comes from.
pub const TOKEN_VARIABLE: &str = "UP_LLM_API_TOKEN";
pub const TOKEN_FILE: &str = "llm_api_token";

pub struct LlmApi {
    models: AiModels,
    token: Token,
    /// Longest one generation may run (the host's `--deadline`).
    deadline: Duration,
}

impl LlmApi {
    pub fn new(models: AiModels, token: Token, deadline: Duration) -> Self {
        Self {
            models,
            token,
            deadline,
        }
    }

    /// `up`'s table's status of the API: where the token is (never the token), and which
    /// model is not installed (it answers 404 saying how to install it; the table says so at
    /// once).
    pub fn table_note(&self) -> String {
        let missing: Vec<&str> = catalogue::ENGINES
            .iter()
            .map(|e| e.name)
            .filter(|name| !self.models.installed(name))
            .collect();
        match missing.as_slice() {
            [] => format!("ready ({})", self.token.note),
            _ => format!(
                "ready ({}; not installed: {}, see `cargo xtask install-models`)",
                self.token.note,
                missing.join(", ")
            ),
        }
    }

    async fn respond(&self, req: hyper::Request<Incoming>) -> HostResponse {
        match self.token.admits_headers(req.headers()) {
            Admission::Admitted => {}
            Admission::Missing => {
                return unauthorized(
                    "missing_api_key",
                    "this API needs `Authorization: Bearer <token>` (see `up`'s table for where \
                     the token is)",
                );
            }
            Admission::Wrong => return unauthorized("invalid_api_key", "wrong API token"),
        }
        let path = req.uri().path().trim_end_matches('/').to_owned();
        let method = req.method().clone();
        let reads = method == Method::GET || method == Method::HEAD;
        match path.as_str() {
            "/v1/models" if reads => models::list(&self.models),
            "/v1/models" => not_allowed(&method, &path, "GET"),
            p if p.starts_with("/v1/models/") && reads => {
                models::one(&self.models, &p["/v1/models/".len()..])
            }
            "/v1/chat/completions" | "/v1/embeddings" | "/infer" | "/embed"
                if method != Method::POST =>
            {
                not_allowed(&method, &path, "POST")
            }
            "/v1/chat/completions" => match read_json(req).await {
                Ok(request) => self.chat(request).await,
                Err(resp) => resp,
            },
            "/v1/embeddings" => match read_json(req).await {
                Ok(request) => embeddings::answer_request(&self.models, request).await,
                Err(resp) => resp,
            },
            "/infer" => match read_json(req).await {
                Ok(request) => spin_remote::infer(&self.models, request, self.deadline).await,
                Err(resp) => resp,
            },
            "/embed" => match read_json(req).await {
                Ok(request) => spin_remote::embed_texts(&self.models, request).await,
                Err(resp) => resp,
            },
            _ => error(404, "not_found", format!("no route {path}")),
        }
    }

    async fn chat(&self, request: ChatRequest) -> HostResponse {
        let generator = match models::language_model(&self.models, &request.model).await {
            Ok(g) => g,
            Err(resp) => return resp,
        };
        let meta = Meta::new(&request.model);
        let plan = match request.plan() {
            Ok(p) => p,
            Err(why) => return error(400, "invalid_request", why),
        };
        let vocabulary = generator.vocabulary();
        // The messages' text is tokenized as text: a message cannot write a turn's markers.
        let used = match vocabulary.encode_chat(&plan.messages) {
            Ok(ids) => ids.len(),
            Err(e) => return error(500, "model_error", format!("{e:#}")),
        };
        let mut params = plan.params;
        if plan.max_tokens.is_none() {
            // The rest of the context: the prompt's tokens counted as the generator will.
            let room = generator.context().saturating_sub(used).max(1);
            params.max_tokens = MAX_NEW_TOKENS.min(room as u32);
        }
        let request = Request {
            prompt: Prompt::Chat(plan.messages),
            params,
            deadline: Some(Instant::now() + self.deadline),
        };
        let stream = match generator.submit(request) {
            Ok(s) => s,
            Err(e) => return refused(e),
        };
        if plan.stream {
            return sse::response(stream, meta, plan.include_usage);
        }
        collect(stream, &meta).await
    }
}

/// The whole answer of `stream`, as one completion. Dropped with the request when the
/// client goes away, and the stream's receiver with it: the generator stops.
async fn collect(mut stream: Stream, meta: &Meta) -> HostResponse {
    let mut text = String::new();
    while let Some(event) = stream.events.recv().await {
        match event {
            Event::Text(piece) => text.push_str(&piece),
            Event::Done { tokens, finish } => {
                let body = meta.completion(&text, finish, stream.prompt_tokens, tokens.len());
                return reply::answer(200, &body);
            }
            Event::Failed(message) => return error(500, "model_error", message),
            Event::Expired(message) => return error(504, "timeout", message),
        }
    }
    error(500, "model_error", "the model's thread stopped mid-answer")
}

fn unauthorized(code: &str, message: &str) -> HostResponse {
    let mut resp = error(401, code, message);
    resp.headers_mut().insert(
        hyper::header::WWW_AUTHENTICATE,
        hyper::header::HeaderValue::from_static("Bearer"),
    );
    resp
}

impl HostRoute for LlmApi {
    fn answer(
        &self,
        req: hyper::Request<Incoming>,
    ) -> Pin<Box<dyn Future<Output = HostResponse> + Send + '_>> {
        Box::pin(self.respond(req))
    }
}
