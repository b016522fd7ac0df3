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
//! Fair shares. A round holds about one pass of work ([`Embedder::round_tokens`]), taken one text at a
//! time from each request in turn; a request with more left over stays for the next round,
//! which any request queued meanwhile joins. So a request of 64 long texts no longer holds a
//! one-word request from another client for its whole length (9.6 s measured), only for the
//! round under way.
//!
//! A request that stops waiting (its deadline passed, its client went away) drops its end of
//! the reply channel, and its texts are skipped if they have not run yet.

use crate::llm::engine::{Embedder, Tokens};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

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
pub struct EmbeddingBatch {
    pub vectors: Vec<Vec<f32>>,
    pub tokens: usize,
}

struct Job {
    texts: Vec<String>,
    max_tokens: usize,
    reply: oneshot::Sender<Result<EmbeddingBatch, EmbedError>>,
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
    pub fn start(name: &str, model: Box<dyn Embedder>) -> std::io::Result<Self> {
        let (queue, jobs) = mpsc::channel();
        let waiting = Arc::new(AtomicUsize::new(0));
        let thread = Thread {
            model,
            jobs,
            waiting: waiting.clone(),
            metrics: host_metrics::Embedding::new(name),
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
    ) -> Result<EmbeddingBatch, EmbedError> {
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
    model: Box<dyn Embedder>,
    jobs: mpsc::Receiver<Job>,
    waiting: Arc<AtomicUsize>,
    metrics: host_metrics::Embedding,
}

/// A request being worked on: its texts, and the vectors done so far.
struct Active {
    job: Job,
    tokens: Vec<Tokens>,
    vectors: Vec<Vec<f32>>,
    token_count: usize,
}

impl Active {
    fn left(&self) -> usize {
        self.tokens.len() - self.vectors.len()
    }
}

impl Thread {
    /// Gathers a round, runs it, answers whoever is done, repeats until every handle is
    /// dropped.
    fn run(self) {
        let mut active: Vec<Active> = Vec::new();
        let mut expected = 1;
        loop {
            if active.is_empty() {
                // Idle: wait for work, then a moment for the others expected (module docs).
                let Ok(first) = self.jobs.recv() else { return };
                let gather_until = Instant::now() + GATHER;
                let mut arrived = 1;
                self.admit(first, &mut active);
                while arrived < expected {
                    let left = gather_until.saturating_duration_since(Instant::now());
                    let Ok(job) = self.jobs.recv_timeout(left) else {
                        break;
                    };
                    self.admit(job, &mut active);
                    arrived += 1;
                }
            }
            while let Ok(job) = self.jobs.try_recv() {
                self.admit(job, &mut active);
            }
            self.metrics.queue(self.waiting.load(Ordering::Relaxed));
            self.run_round(&mut active);
            expected = self.waiting.load(Ordering::Relaxed).max(1);
            self.metrics.queue(self.waiting.load(Ordering::Relaxed));
        }
    }

    /// Tokenizes a new request: refused at once if a text is too long, else queued.
    fn admit(&self, job: Job, active: &mut Vec<Active>) {
        if job.reply.is_closed() {
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        match tokenize(&*self.model, &job) {
            Ok(tokens) if tokens.is_empty() => {
                let _ = job.reply.send(Ok(EmbeddingBatch {
                    vectors: Vec::new(),
                    tokens: 0,
                }));
                self.waiting.fetch_sub(1, Ordering::Relaxed);
            }
            Ok(tokens) => active.push(Active {
                token_count: tokens.iter().map(Tokens::len).sum(),
                vectors: Vec::with_capacity(tokens.len()),
                tokens,
                job,
            }),
            Err(e) => {
                let _ = job.reply.send(Err(e));
                self.waiting.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    /// Takes texts from the live requests in turn (one each, round and round) up to
    /// [`Embedder::round_tokens`], embeds them in one go, and answers every request that is complete.
    fn run_round(&self, active: &mut Vec<Active>) {
        let before = active.len();
        active.retain(|a| !a.job.reply.is_closed());
        self.waiting
            .fetch_sub(before - active.len(), Ordering::Relaxed);
        // (request, text) of each text taken, in the order taken.
        let mut taken: Vec<(usize, usize)> = Vec::new();
        let mut next: Vec<usize> = active.iter().map(|a| a.vectors.len()).collect();
        let mut budget = 0;
        'fill: loop {
            let mut took_any = false;
            for (r, a) in active.iter().enumerate() {
                let Some(text) = a.tokens.get(next[r]) else {
                    continue;
                };
                if !taken.is_empty() && budget + text.len() > self.model.round_tokens() {
                    break 'fill;
                }
                budget += text.len();
                taken.push((r, next[r]));
                next[r] += 1;
                took_any = true;
            }
            if !took_any {
                break;
            }
        }
        if taken.is_empty() {
            return;
        }
        // Each request's texts are taken in order, so its vectors arrive in order.
        taken.sort_unstable();
        let batch: Vec<Tokens> = taken
            .iter()
            .map(|&(r, t)| active[r].tokens[t].clone())
            .collect();
        self.metrics.batch(batch.len());
        let started = Instant::now();
        let result = self.model.embed(&batch, &|| true);
        tracing::debug!(
            requests = active.len(),
            texts = batch.len(),
            tokens = budget,
            ms = started.elapsed().as_secs_f64() * 1000.0,
            "embedding round"
        );
        match result {
            Ok(vectors) => {
                for (&(r, _), vector) in taken.iter().zip(vectors) {
                    active[r].vectors.push(vector);
                }
                let mut i = 0;
                while i < active.len() {
                    if active[i].left() == 0 {
                        let a = active.swap_remove(i);
                        let _ = a.job.reply.send(Ok(EmbeddingBatch {
                            vectors: a.vectors,
                            tokens: a.token_count,
                        }));
                        self.waiting.fetch_sub(1, Ordering::Relaxed);
                    } else {
                        i += 1;
                    }
                }
            }
            Err(e) => {
                // Only the requests in this round are failed; the others keep their turn.
                let message = format!("{e:#}");
                tracing::error!(error = %message, "embedding failed");
                let mut failed: Vec<usize> = taken.iter().map(|&(r, _)| r).collect();
                failed.dedup();
                for r in failed.into_iter().rev() {
                    let a = active.swap_remove(r);
                    let _ = a.job.reply.send(Err(EmbedError::Runtime(message.clone())));
                    self.waiting.fetch_sub(1, Ordering::Relaxed);
                }
            }
        }
    }
}

fn tokenize(model: &dyn Embedder, job: &Job) -> Result<Vec<Tokens>, EmbedError> {
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
