//! The thread that runs one embedding model, and the queue in front of it.
//!
//! Requests never run the network on the async executor: they queue texts here and await the
//! answer, so a long batch holds up no other request. While the thread runs one pass, new
//! requests gather in the queue; the next round takes all of them at once and runs their texts
//! together, sorted by length. Under load, single-sentence requests are thereby served in
//! batches, which costs a fraction of the time per text that one-at-a-time passes do.
//!
//! A request that stops waiting (its deadline passed, its client went away) drops its end of
//! the reply channel, and its texts are skipped if they have not run yet.

use super::minilm::{MiniLm, Tokens};
use std::sync::Arc;
use std::sync::mpsc;
use tokio::sync::oneshot;

/// Texts one round takes from the queue at most (a request's texts always run in one round).
const ROUND_TEXTS: usize = 256;
/// Longest a round waits for the requests it expects (see [`run`]): a small part of one
/// pass, which takes 10 ms or more.
const GATHER: std::time::Duration = std::time::Duration::from_millis(2);

/// Why a request got no embeddings.
#[derive(Debug)]
pub enum EmbedError {
    /// A text the model cannot take (empty list entry aside, a text over the token limit).
    Invalid(String),
    /// The network failed.
    Runtime(String),
}

/// The embeddings of one request, in order, and the tokens they took.
pub struct Embedded {
    pub vectors: Vec<Vec<f32>>,
    pub tokens: usize,
}

struct Job {
    texts: Vec<String>,
    max_tokens: usize,
    reply: oneshot::Sender<Result<Embedded, EmbedError>>,
}

/// A handle on the model's thread; cloning shares the thread.
#[derive(Clone)]
pub struct Worker {
    queue: mpsc::Sender<Job>,
}

impl Worker {
    /// Starts the thread that owns `model`.
    pub fn start(name: &str, model: MiniLm) -> std::io::Result<Self> {
        let (queue, jobs) = mpsc::channel();
        let model = Arc::new(model);
        std::thread::Builder::new()
            .name(format!("llm-{name}"))
            .spawn(move || run(&model, jobs))?;
        Ok(Self { queue })
    }

    /// Embeds `texts`, refusing any of more than `max_tokens` tokens.
    pub async fn embed(
        &self,
        texts: Vec<String>,
        max_tokens: usize,
    ) -> Result<Embedded, EmbedError> {
        let (reply, answer) = oneshot::channel();
        let job = Job {
            texts,
            max_tokens,
            reply,
        };
        if self.queue.send(job).is_err() {
            return Err(EmbedError::Runtime(
                "the embedding thread has stopped".into(),
            ));
        }
        answer
            .await
            .unwrap_or_else(|_| Err(EmbedError::Runtime("the embedding thread failed".into())))
    }
}

/// The thread: takes what is queued, runs it as one round, answers, repeats until every
/// handle is dropped.
///
/// Requests answered together come back together: their clients send the next ones at
/// about the same time, but not at the same instant. So when the last round served several
/// requests, the next waits a moment ([`GATHER`]) for as many to queue up before it starts,
/// instead of running the first arrival alone and the rest after it. A lone client never
/// waits: its rounds hold one request.
fn run(model: &MiniLm, jobs: mpsc::Receiver<Job>) {
    let mut last_round = 0;
    while let Ok(first) = jobs.recv() {
        let mut round = vec![first];
        let mut texts = round[0].texts.len();
        let deadline = std::time::Instant::now() + GATHER;
        while texts < ROUND_TEXTS {
            let next = if round.len() < last_round {
                jobs.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
                    .ok()
            } else {
                jobs.try_recv().ok()
            };
            let Some(job) = next else { break };
            texts += job.texts.len();
            round.push(job);
        }
        last_round = round.len();
        run_round(model, round);
    }
}

/// Tokenizes every live job (answering refusals at once), embeds the texts of the rest in one
/// go, and hands each job its vectors.
fn run_round(model: &MiniLm, round: Vec<Job>) {
    let mut accepted: Vec<(Job, usize)> = Vec::new();
    let mut all: Vec<Tokens> = Vec::new();
    for job in round {
        if job.reply.is_closed() {
            continue;
        }
        match tokenize(model, &job) {
            Ok(tokens) => {
                let count = tokens.iter().map(Tokens::len).sum();
                all.extend(tokens);
                accepted.push((job, count));
            }
            Err(e) => {
                let _ = job.reply.send(Err(e));
            }
        }
    }
    if accepted.is_empty() {
        return;
    }
    let keep_going = || accepted.iter().any(|(job, _)| !job.reply.is_closed());
    let started = std::time::Instant::now();
    let result = model.embed(&all, keep_going);
    tracing::debug!(
        requests = accepted.len(),
        texts = all.len(),
        tokens = all.iter().map(Tokens::len).sum::<usize>(),
        ms = started.elapsed().as_secs_f64() * 1000.0,
        "embedding round"
    );
    match result {
        Ok(vectors) => {
            let mut vectors = vectors.into_iter();
            for (job, tokens) in accepted {
                let vectors = vectors.by_ref().take(job.texts.len()).collect();
                let _ = job.reply.send(Ok(Embedded { vectors, tokens }));
            }
        }
        Err(e) => {
            let message = format!("{e:#}");
            tracing::error!(error = %message, "embedding failed");
            for (job, _) in accepted {
                let _ = job.reply.send(Err(EmbedError::Runtime(message.clone())));
            }
        }
    }
}

fn tokenize(model: &MiniLm, job: &Job) -> Result<Vec<Tokens>, EmbedError> {
    job.texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let tokens = model
                .tokenize(text)
                .map_err(|e| EmbedError::Runtime(format!("tokenizing text {i}: {e:#}")))?;
            if tokens.len() > job.max_tokens {
                return Err(EmbedError::Invalid(format!(
                    "text {i} is {} tokens long with [CLS] and [SEP]; the model reads at most {}",
                    tokens.len(),
                    job.max_tokens
                )));
            }
            Ok(tokens)
        })
        .collect()
}
