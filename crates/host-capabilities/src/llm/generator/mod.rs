//! The thread that runs one language model for every caller, and the bounded queue in front.
//!
//! Callers never run the network on the async executor: [`Generator::submit`] tokenizes and
//! checks the request, then hands it to the model's thread and gets a channel of [`Event`]s
//! (pieces of text as they are made, then the end). The thread keeps up to [`MAX_STREAMS`]
//! streams going at once and advances them together: each pass of the network carries, for
//! every stream, either its next piece of prompt (at most [`PROMPT_CHUNK`] tokens, so a long
//! prompt never holds the others up for more than one such pass) or the token it chose last.
//! The weights are read once per pass for all streams, which is where the throughput of many
//! streams comes from (one copy of the weights, shared; one cache per stream).
//!
//! Bounds: a request must fit the context with its `max_tokens`; at most [`MAX_NEW_TOKENS`]
//! are made; at most [`MAX_WAITING`] requests wait behind the streams under way, and past that
//! `submit` answers [`GenerateError::Busy`] at once. A stream stops when its receiver is
//! dropped (the client went away, the component's request was cut off) or its deadline passes.

mod streams;
mod types;

use types::Job;
pub use types::{Event, Finish, MAX_NEW_TOKENS, MAX_STREAMS, MAX_WAITING, RETRY_AFTER_SECONDS};

use super::llama::Llama;
use super::sampling::Params;
use super::vocabulary::{Message, Vocabulary};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;
use tokio::sync::mpsc as events;

/// What the model continues.
pub enum Prompt {
    /// Text as it is, the chat format's markers in it read as the markers (`infer`'s prompt,
    /// as Spin's engines read it).
    Text(String),
    /// A chat, written with the model's own template; the messages' text is read as text, so
    /// a message cannot open a turn of another role by writing `<|im_start|>`.
    Chat(Vec<Message>),
}

/// One request for text.
pub struct Request {
    pub prompt: Prompt,
    pub params: Params,
    pub deadline: Option<Instant>,
}

/// Why a request was not taken.
#[derive(Debug, Clone, PartialEq)]
pub enum GenerateError {
    /// Nothing the model can do with it (the message says what to change).
    Invalid(String),
    /// Every stream is busy and the queue is full: try again after a while.
    Busy,
    /// The model failed.
    Runtime(String),
}

/// A submitted request: its prompt's length, and its events.
pub struct Stream {
    pub prompt_tokens: usize,
    pub events: events::UnboundedReceiver<Event>,
}

/// A whole answer.
#[derive(Debug)]
pub struct Completion {
    pub text: String,
    pub tokens: Vec<u32>,
    pub prompt_tokens: usize,
    pub finish: Finish,
}

/// A handle on the model's thread; cloning shares it.
#[derive(Clone)]
pub struct Generator {
    queue: mpsc::Sender<Job>,
    /// Requests taken and not finished (waiting or under way).
    pending: Arc<AtomicUsize>,
    vocabulary: Arc<Vocabulary>,
    context: usize,
    metrics: host_metrics::Generation,
}

impl Generator {
    pub fn start(name: &str, llama: Llama, vocabulary: Vocabulary) -> std::io::Result<Self> {
        let (queue, jobs) = mpsc::channel();
        let pending = Arc::new(AtomicUsize::new(0));
        let vocabulary = Arc::new(vocabulary);
        let context = llama.context();
        let metrics = host_metrics::Generation::new(name);
        let thread = streams::Thread {
            llama,
            vocabulary: vocabulary.clone(),
            jobs,
            pending: pending.clone(),
            metrics: metrics.clone(),
        };
        std::thread::Builder::new()
            .name(format!("llm-{name}"))
            .spawn(move || thread.run())?;
        Ok(Self {
            queue,
            pending,
            vocabulary,
            context,
            metrics,
        })
    }

    pub fn vocabulary(&self) -> &Vocabulary {
        &self.vocabulary
    }

    /// The most tokens a prompt and its answer may hold together.
    pub fn context(&self) -> usize {
        self.context
    }

    /// Takes `request`, or says why not (at once: nothing waits here).
    pub fn submit(&self, request: Request) -> Result<Stream, GenerateError> {
        request.params.check().map_err(GenerateError::Invalid)?;
        let max = request.params.max_tokens;
        if max > MAX_NEW_TOKENS {
            return Err(GenerateError::Invalid(format!(
                "max-tokens {max} is above this host's limit of {MAX_NEW_TOKENS}"
            )));
        }
        let bytes = match &request.prompt {
            Prompt::Text(text) => text.len(),
            Prompt::Chat(messages) => messages
                .iter()
                .map(|m| m.role.len() + m.content.len())
                .sum(),
        };
        if bytes > self.context * self.vocabulary.longest_token() {
            return Err(GenerateError::Invalid(format!(
                "the prompt is {bytes} bytes, more than the model's context of {} tokens can hold \
                 (shorten the prompt)",
                self.context
            )));
        }
        let prompt = match &request.prompt {
            Prompt::Text(text) => self.vocabulary.encode(text),
            Prompt::Chat(messages) => self.vocabulary.encode_chat(messages),
        }
        .map_err(|e| GenerateError::Invalid(e.to_string()))?;
        if prompt.is_empty() {
            return Err(GenerateError::Invalid("the prompt is empty".into()));
        }
        if prompt.len() + max as usize > self.context {
            return Err(GenerateError::Invalid(format!(
                "the prompt is {} tokens and max-tokens is {max}: together they exceed the model's \
                 context of {} tokens (shorten the prompt or ask for fewer tokens)",
                prompt.len(),
                self.context
            )));
        }
        let taken = self.pending.fetch_add(1, Ordering::SeqCst);
        self.metrics.queue(taken + 1);
        if taken >= MAX_STREAMS + MAX_WAITING {
            let left = self.pending.fetch_sub(1, Ordering::SeqCst) - 1;
            self.metrics.queue(left);
            self.metrics.refused();
            return Err(GenerateError::Busy);
        }
        let (tx, rx) = events::unbounded_channel();
        let prompt_tokens = prompt.len();
        let job = Job {
            prompt,
            params: request.params,
            deadline: request.deadline,
            events: tx,
        };
        if self.queue.send(job).is_err() {
            let left = self.pending.fetch_sub(1, Ordering::SeqCst) - 1;
            self.metrics.queue(left);
            return Err(GenerateError::Runtime(
                "the model's thread has stopped".into(),
            ));
        }
        Ok(Stream {
            prompt_tokens,
            events: rx,
        })
    }

    /// The whole answer to `request`.
    pub async fn complete(&self, request: Request) -> Result<Completion, GenerateError> {
        let mut stream = self.submit(request)?;
        let mut text = String::new();
        while let Some(event) = stream.events.recv().await {
            match event {
                Event::Text(piece) => text.push_str(&piece),
                Event::Done { tokens, finish } => {
                    return Ok(Completion {
                        text,
                        tokens,
                        prompt_tokens: stream.prompt_tokens,
                        finish,
                    });
                }
                Event::Failed(message) | Event::Expired(message) => {
                    return Err(GenerateError::Runtime(message));
                }
            }
        }
        Err(GenerateError::Runtime(
            "the model's thread stopped mid-answer".into(),
        ))
    }

    /// Requests waiting or under way (for the queue's metric and tests).
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }
}
