//! `fermyon:spin/llm@2.0.0` for components, as Spin serves it, with the models of
//! [`catalogue::ENGINES`] run natively, each on its own thread: `generate-embeddings` with an
//! embedding model (`all-minilm-l6-v2`, [`minilm`], on [`worker`]), `infer` with a language
//! model (`smollm2-135m-instruct`, [`smollm2`], on [`generator`]). A model a component was not
//! granted (Spin's `ai_models = [...]` in the manifest; `--ai-model` here), or one that does
//! the other job, answers `model-not-supported`.
//!
//! A model is loaded on first use from `<ai-models dir>/<name>/` (Spin's
//! `.spin/ai-models` layout), once per process: every instance of every component the
//! process serves shares one copy of the weights.

mod bert;
pub mod catalogue;
pub mod engine;
pub mod generator;
mod llama;
mod minilm;
mod quantized;
pub mod sampling;
pub mod smollm2;
pub mod vocabulary;
mod weights;
mod worker;

use crate::bindings::fermyon::spin::llm;
use engine::Load;
use generator::{GenerateError, Generator};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;
use wasmtime::component::{HasData, Linker};
use worker::Worker;
pub use worker::{EmbedError, EmbeddingBatch};

/// Texts one call may carry: bounds the work and the answer one request can ask for.
const MAX_TEXTS_PER_CALL: usize = 1024;

/// The AI models of one process: where their files are, and those loaded so far.
#[derive(Clone)]
pub struct AiModels {
    dir: PathBuf,
    loaded: Arc<Mutex<HashMap<String, Arc<OnceCell<ModelThread>>>>>,
}

/// A loaded model, on its thread.
#[derive(Clone)]
enum ModelThread {
    Embedding(Worker),
    Generation(Generator),
}

impl AiModels {
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            loaded: Arc::default(),
        }
    }

    /// The directory `name`'s files are read from.
    pub fn model_dir(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Whether `name`'s files are in place (checked by `up` before deploying a model that
    /// needs it).
    pub fn installed(&self, name: &str) -> bool {
        let dir = self.model_dir(name);
        catalogue::find(name).is_some_and(|e| e.files.iter().all(|f| dir.join(f).is_file()))
    }

    /// The running model, loaded on first use. A failed load is not remembered: the next
    /// call tries again, so installing the files fixes a running host.
    async fn running(&self, name: &str) -> Result<ModelThread, String> {
        let cell = self
            .loaded
            .lock()
            .unwrap()
            .entry(name.to_owned())
            .or_default()
            .clone();
        let dir = self.model_dir(name);
        let name = name.to_owned();
        cell.get_or_try_init(|| async move {
            if !self.installed(&name) {
                return Err(not_installed(&name, &dir));
            }
            let started = std::time::Instant::now();
            let engine = catalogue::find(&name).ok_or_else(|| not_installed(&name, &dir))?;
            let (thread_name, load_dir) = (name.clone(), dir.clone());
            let loaded = tokio::task::spawn_blocking(move || match engine.load {
                Load::Embedding(load) => load(&load_dir).map(Model::Embedding),
                Load::Generation(load) => load(&load_dir).map(|lv| Model::Generation(Box::new(lv))),
            })
            .await
            .map_err(|e| format!("loading {name}: {e}"))?
            .map_err(|e| format!("loading {name} from {}: {e:#}", dir.display()))?;
            tracing::info!(model = %name, load_ms = started.elapsed().as_millis() as u64, "AI model loaded");
            match loaded {
                Model::Embedding(model) => Worker::start(&thread_name, model).map(ModelThread::Embedding),
                Model::Generation(loaded) => {
                    let (llama, vocabulary) = *loaded;
                    Generator::start(&thread_name, llama, vocabulary).map(ModelThread::Generation)
                }
            }
            .map_err(|e| format!("starting {name}: {e}"))
        })
        .await
        .cloned()
    }

    /// The language model `name`, loaded on first use (for the host's own endpoints; a
    /// component reaches it through `infer`).
    pub async fn generator(&self, name: &str) -> Result<Generator, String> {
        match self.running(name).await? {
            ModelThread::Generation(g) => Ok(g),
            ModelThread::Embedding(_) => Err(format!(
                "`{name}` is an embedding model; it does not generate text"
            )),
        }
    }

    /// Embeddings of `texts` by the embedding model `name` (for the host's own endpoints).
    pub async fn embed(
        &self,
        name: &str,
        texts: Vec<String>,
    ) -> Result<worker::EmbeddingBatch, EmbedError> {
        if texts.len() > MAX_TEXTS_PER_CALL {
            return Err(EmbedError::Invalid(format!(
                "{} texts in one call; at most {MAX_TEXTS_PER_CALL}",
                texts.len()
            )));
        }
        let worker = match self.running(name).await.map_err(EmbedError::Runtime)? {
            ModelThread::Embedding(w) => w,
            ModelThread::Generation(_) => {
                return Err(EmbedError::Invalid(format!(
                    "`{name}` is a language model; it makes no embeddings"
                )));
            }
        };
        let max_tokens = catalogue::find(name).map_or(0, |e| e.max_tokens);
        worker.embed(texts, max_tokens).await
    }

    /// Whether `name` is a model this host runs that generates text.
    pub fn generates(name: &str) -> bool {
        catalogue::find(name).is_some_and(|e| matches!(e.load, Load::Generation(_)))
    }
}

/// A model in memory, as loading gives it, before its thread starts.
enum Model {
    Embedding(Box<dyn engine::Embedder>),
    Generation(Box<(llama::Llama, vocabulary::Vocabulary)>),
}

/// What a missing model says: where its files belong and how to put them there.
pub fn not_installed(name: &str, dir: &Path) -> String {
    match catalogue::find(name) {
        Some(e) => format!(
            "the AI model `{name}` is not installed: {} {} expected in {}. {}, or point \
             --ai-models-dir at a directory holding {name}/",
            e.files.join(" and "),
            if e.files.len() == 1 { "is" } else { "are" },
            dir.display(),
            capitalized(e.install),
        ),
        None => format!(
            "this host runs no AI model `{name}` (it runs {})",
            catalogue::names()
        ),
    }
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// What one component may use: the process's models, and the names it was granted.
#[derive(Clone)]
pub struct AiGrant {
    pub models: AiModels,
    pub granted: Arc<[String]>,
}

impl AiGrant {
    /// A grant of `names` (checked: only models this host can run).
    pub fn new(models: AiModels, names: &[String]) -> anyhow::Result<Self> {
        if let Some(unknown) = names.iter().find(|n| catalogue::find(n).is_none()) {
            anyhow::bail!(
                "--ai-model {unknown}: this host runs only the AI model(s) {}",
                catalogue::names()
            );
        }
        Ok(Self {
            models,
            granted: names.into(),
        })
    }

    fn allows(&self, name: &str) -> bool {
        self.granted.iter().any(|g| g == name)
    }
}

pub struct LlmCtx<'a>(pub &'a AiGrant, pub &'a CallerGone);

/// Whether the caller of the request a component serves went away: set by the host's HTTP
/// layer when it stops waiting for the response head. Only `infer` listens (its generation
/// stops and it answers an error); the guest itself runs on and finishes what it was doing,
/// so nothing it was writing is left half done.
#[derive(Clone)]
pub struct CallerGone(tokio::sync::watch::Receiver<bool>);

impl CallerGone {
    /// A pair: the signal, and the sender that raises it (`send(true)`).
    pub fn channel() -> (tokio::sync::watch::Sender<bool>, Self) {
        let (tx, rx) = tokio::sync::watch::channel(false);
        (tx, Self(rx))
    }

    /// One that never goes off.
    pub fn never() -> Self {
        Self::channel().1
    }

    /// Resolves when the caller is gone; never when the sender is dropped without saying so.
    pub async fn wait(&self) {
        let mut rx = self.0.clone();
        if rx.wait_for(|gone| *gone).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

struct LlmData;
impl HasData for LlmData {
    type Data<'a> = LlmCtx<'a>;
}

pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> LlmCtx<'_>,
) -> wasmtime::Result<()> {
    llm::add_to_linker::<T, LlmData>(linker, get)
}

impl llm::Host for LlmCtx<'_> {
    async fn infer(
        &mut self,
        model: String,
        prompt: String,
        params: Option<llm::InferencingParams>,
    ) -> wasmtime::Result<Result<llm::InferencingResult, llm::Error>> {
        if !self.0.allows(&model) || !AiModels::generates(&model) {
            return Ok(Err(llm::Error::ModelNotSupported));
        }
        let generator = match self.0.models.generator(&model).await {
            Ok(g) => g,
            Err(message) => return Ok(Err(llm::Error::RuntimeError(message))),
        };
        let params = params.map_or_else(sampling::Params::default, |p| sampling::Params {
            max_tokens: p.max_tokens,
            repeat_penalty: p.repeat_penalty,
            repeat_penalty_last_n: p.repeat_penalty_last_n_token_count,
            temperature: p.temperature,
            top_k: p.top_k,
            top_p: p.top_p,
        });
        // No deadline of its own: when the component's request is cut off, this call is
        // dropped with it, and so is the stream (the generator stops making its tokens).
        let request = generator::Request {
            prompt: generator::Prompt::Text(prompt),
            params,
            deadline: None,
        };
        let caller_gone = self.1.clone();
        let done = tokio::select! {
            done = generator.complete(request) => done,
            () = caller_gone.wait() => Err(GenerateError::Runtime(
                "the request's client went away; its generation was stopped".into(),
            )),
        };
        Ok(match done {
            Ok(done) => Ok(llm::InferencingResult {
                text: done.text,
                usage: llm::InferencingUsage {
                    prompt_token_count: done.prompt_tokens as u32,
                    generated_token_count: done.tokens.len() as u32,
                },
            }),
            Err(GenerateError::Invalid(m)) => Err(llm::Error::InvalidInput(m)),
            Err(GenerateError::Busy) => Err(llm::Error::RuntimeError(format!(
                "the model is busy: every stream is taken and the queue is full; try again in \
                 {} s",
                generator::RETRY_AFTER_SECONDS
            ))),
            Err(GenerateError::Runtime(m)) => Err(llm::Error::RuntimeError(m)),
        })
    }

    async fn generate_embeddings(
        &mut self,
        model: String,
        texts: Vec<String>,
    ) -> wasmtime::Result<Result<llm::EmbeddingsResult, llm::Error>> {
        if !self.0.allows(&model) || AiModels::generates(&model) {
            return Ok(Err(llm::Error::ModelNotSupported));
        }
        Ok(match self.0.models.embed(&model, texts).await {
            Ok(done) => Ok(llm::EmbeddingsResult {
                embeddings: done.vectors,
                usage: llm::EmbeddingsUsage {
                    prompt_token_count: done.tokens as u32,
                },
            }),
            Err(EmbedError::Invalid(m)) => Err(llm::Error::InvalidInput(m)),
            Err(EmbedError::Runtime(m)) => Err(llm::Error::RuntimeError(m)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_and_messages_come_from_the_engines() {
        let dir = std::env::temp_dir().join(format!("ai-{}", uuid::Uuid::new_v4().simple()));
        let models = AiModels::new(dir.clone());
        let minilm = edge_api::embedding::MODEL;
        assert!(AiGrant::new(models.clone(), &[minilm.to_owned()]).is_ok());
        let err = AiGrant::new(models.clone(), &["gpt-9".to_owned()])
            .err()
            .expect("an unknown model is refused");
        assert!(format!("{err}").contains(minilm), "{err}");
        // Installed means every file the engine names is there; unknown names never are.
        assert!(!models.installed(minilm));
        assert!(!models.installed("gpt-9"));
        let why = not_installed(minilm, &models.model_dir(minilm));
        for file in catalogue::find(minilm).unwrap().files {
            assert!(why.contains(file), "{why}");
        }
        std::fs::create_dir_all(models.model_dir(minilm)).unwrap();
        for file in catalogue::find(minilm).unwrap().files {
            std::fs::write(models.model_dir(minilm).join(file), b"").unwrap();
        }
        assert!(models.installed(minilm));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn engine_names_are_unique() {
        let mut names: Vec<_> = catalogue::ENGINES.iter().map(|e| e.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), catalogue::ENGINES.len());
    }
}

#[cfg(test)]
mod generation_tests;
