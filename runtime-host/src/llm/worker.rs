//! The thread that runs one embedding model, and the queue in front of it.
//!
//! Requests never run the network on the async executor: they queue texts here and await the
//! answer, so a long batch holds up no other request. Texts that wait together run together,
//! sorted by length: under load, single-sentence requests are served in batches, which costs a
//! fraction of the time per text that one-at-a-time passes do.
//!
//! How a round is gathered. Requests answered together come back together, a moment later:
//! their clients send the next ones, but not at the same instant. A round that started with
//! whatever was queued would split the clients into groups that alternate for ever (half the
//! batch each time, measured). So the thread counts the requests waiting on it at the end of
//! each round (those it is about to answer and those queued meanwhile) and lets the next
//! round wait a moment ([`GATHER`]) for that many. A lone client never waits: the count is 1.
//!
//! A request that stops waiting (its deadline passed, its client went away) drops its end of
//! the reply channel, and its texts are skipped if they have not run yet.

use super::minilm::{MiniLm, Tokens};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// Texts one round takes from the queue at most (a request's texts always run in one round).
const ROUND_TEXTS: usize = 256;
/// Longest a round waits for the requests it expects: a small part of one pass, which takes
/// 10 ms or more.
const GATHER: Duration = Duration::from_millis(3);

/// Why a request got no embeddings.
#[derive(Debug)]
pub enum EmbedError {
    /// A text the model cannot take (over the token limit).
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
    /// Requests submitted and not yet answered (or skipped).
    waiting: Arc<AtomicUsize>,
}

impl Worker {
    /// Starts the thread that owns `model`.
    pub fn start(name: &str, model: MiniLm) -> std::io::Result<Self> {
        let (queue, jobs) = mpsc::channel();
        let waiting = Arc::new(AtomicUsize::new(0));
        let thread = Thread {
            model,
            jobs,
            waiting: waiting.clone(),
        };
        std::thread::Builder::new()
            .name(format!("llm-{name}"))
            .spawn(move || thread.run())?;
        Ok(Self { queue, waiting })
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
        self.waiting.fetch_add(1, Ordering::Relaxed);
        if self.queue.send(job).is_err() {
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            return Err(EmbedError::Runtime(
                "the embedding thread has stopped".into(),
            ));
        }
        answer
            .await
            .unwrap_or_else(|_| Err(EmbedError::Runtime("the embedding thread failed".into())))
    }
}

struct Thread {
    model: MiniLm,
    jobs: mpsc::Receiver<Job>,
    waiting: Arc<AtomicUsize>,
}

impl Thread {
    /// Gathers a round, runs it, answers, repeats until every handle is dropped.
    fn run(self) {
        let mut expected = 1;
        while let Ok(first) = self.jobs.recv() {
            let gather_until = Instant::now() + GATHER;
            let mut texts = first.texts.len();
            let mut round = vec![first];
            while texts < ROUND_TEXTS {
                let next = if round.len() < expected {
                    let left = gather_until.saturating_duration_since(Instant::now());
                    self.jobs.recv_timeout(left).ok()
                } else {
                    self.jobs.try_recv().ok()
                };
                let Some(job) = next else { break };
                texts += job.texts.len();
                round.push(job);
            }
            let jobs = round.len();
            expected = self.run_round(round).max(1);
            self.waiting.fetch_sub(jobs, Ordering::Relaxed);
        }
    }

    /// Tokenizes every live job (answering refusals at once), embeds the texts of the rest in
    /// one go, and hands each job its vectors. Returns how many requests were waiting on the
    /// thread when the embedding was done: what the next round should expect.
    fn run_round(&self, round: Vec<Job>) -> usize {
        let mut accepted: Vec<(Job, usize)> = Vec::new();
        let mut all: Vec<Tokens> = Vec::new();
        for job in round {
            if job.reply.is_closed() {
                continue;
            }
            match tokenize(&self.model, &job) {
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
            return self.waiting.load(Ordering::Relaxed);
        }
        let keep_going = || accepted.iter().any(|(job, _)| !job.reply.is_closed());
        let started = Instant::now();
        let result = self.model.embed(&all, keep_going);
        let waiting = self.waiting.load(Ordering::Relaxed);
        tracing::debug!(
            requests = accepted.len(),
            texts = all.len(),
            tokens = all.iter().map(Tokens::len).sum::<usize>(),
            ms = started.elapsed().as_secs_f64() * 1000.0,
            waiting,
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
        waiting
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
