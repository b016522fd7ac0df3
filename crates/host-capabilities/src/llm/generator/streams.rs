//! The model's thread: the streams under way, one pass of the network over them at a time
//! (the module above says how a pass is made up and bounded).

use super::types::{Event, Finish, Job, MAX_STREAMS, PASS_PROMPT_TOKENS, PROMPT_CHUNK};
use crate::llm::llama::{Cache, Llama, Run};
use crate::llm::sampling;
use crate::llm::vocabulary::Vocabulary;
use rand::SeedableRng;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

/// One stream under way on the thread.
struct StreamState {
    job: Job,
    cache: Cache,
    /// Prompt tokens not yet through the network.
    prompt_left: usize,
    /// Prompt and answer so far (the repeat penalty looks back over both).
    history: Vec<u32>,
    generated: usize,
    /// Bytes of the answer's text already sent.
    sent: usize,
    rng: rand::rngs::StdRng,
}

pub(super) struct Thread {
    pub(super) llama: Llama,
    pub(super) vocabulary: Arc<Vocabulary>,
    pub(super) jobs: mpsc::Receiver<Job>,
    pub(super) pending: Arc<AtomicUsize>,
    pub(super) metrics: host_metrics::Generation,
}

impl Thread {
    pub(super) fn run(self) {
        let mut live: Vec<StreamState> = Vec::new();
        loop {
            if live.is_empty() {
                match self.jobs.recv() {
                    Ok(job) => live.push(self.open(job)),
                    Err(_) => return,
                }
            }
            while live.len() < MAX_STREAMS {
                match self.jobs.try_recv() {
                    Ok(job) => live.push(self.open(job)),
                    Err(_) => break,
                }
            }
            live.retain(|s| {
                let keep = self.still_wanted(s);
                if !keep {
                    self.release();
                }
                keep
            });
            if !live.is_empty() {
                self.step(&mut live);
            }
        }
    }

    /// One request finished (answered, failed or abandoned): its place is free.
    fn release(&self) {
        let left = self.pending.fetch_sub(1, Ordering::SeqCst) - 1;
        self.metrics.queue(left);
    }

    fn open(&self, job: Job) -> StreamState {
        let room = job.prompt.len() + job.params.max_tokens as usize;
        StreamState {
            cache: self.llama.cache(room),
            prompt_left: job.prompt.len(),
            history: job.prompt.clone(),
            generated: 0,
            sent: 0,
            rng: rand::rngs::StdRng::from_os_rng(),
            job,
        }
    }

    /// False for a stream whose caller has gone, or whose deadline passed (it is told).
    fn still_wanted(&self, s: &StreamState) -> bool {
        if s.job.events.is_closed() {
            return false;
        }
        if s.job.deadline.is_some_and(|d| Instant::now() >= d) {
            let _ = s.job.events.send(Event::Expired(format!(
                "the request's deadline passed after {} generated tokens",
                s.generated
            )));
            return false;
        }
        true
    }

    /// One pass of the network over the live streams, then each stream's next token. Streams
    /// still reading their prompt share [`PASS_PROMPT_TOKENS`] of it, in turn; the others add
    /// their last token.
    fn step(&self, live: &mut Vec<StreamState>) {
        let mut budget = PASS_PROMPT_TOKENS;
        let inputs: Vec<Vec<u32>> = live
            .iter()
            .map(|s| match s.prompt_left {
                0 => vec![*s.history.last().expect("a stream holds its prompt")],
                left => {
                    let start = s.job.prompt.len() - left;
                    let take = left.min(PROMPT_CHUNK).min(budget);
                    budget -= take;
                    s.job.prompt[start..start + take].to_vec()
                }
            })
            .collect();
        let prompt_read: usize = live
            .iter()
            .zip(&inputs)
            .filter(|(s, _)| s.prompt_left > 0)
            .map(|(_, i)| i.len())
            .sum();
        let mut runs: Vec<Run> = live
            .iter_mut()
            .zip(&inputs)
            .filter(|(_, tokens)| !tokens.is_empty())
            .map(|(s, tokens)| Run {
                cache: &mut s.cache,
                tokens,
            })
            .collect();
        let passed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.llama.forward(&mut runs)
        }));
        drop(runs);
        let outcome = match passed {
            Ok(Ok(logits)) => Ok(logits),
            Ok(Err(e)) => Err(format!("the model failed: {e:#}")),
            Err(_) => Err("the model failed (a panic in its pass; see the host's log)".to_owned()),
        };
        let logits = match outcome {
            Ok(l) => l,
            Err(message) => {
                for s in live.drain(..) {
                    let _ = s.job.events.send(Event::Failed(message.clone()));
                    self.release();
                }
                return;
            }
        };
        self.metrics.tokens("prompt", prompt_read);
        let mut logits = logits.into_iter();
        let mut finished = Vec::new();
        let mut made = 0;
        for (i, s) in live.iter_mut().enumerate() {
            if inputs[i].is_empty() {
                continue;
            }
            let mut logits = logits.next().expect("one vector of logits per run");
            s.prompt_left -= inputs[i].len().min(s.prompt_left);
            if s.prompt_left > 0 {
                continue;
            }
            if s.job.params.max_tokens == 0 {
                finished.push((i, Finish::Length));
                continue;
            }
            let token = sampling::next_token(&mut logits, &s.history, &s.job.params, &mut s.rng);
            if self.vocabulary.ends_turn(token) {
                finished.push((i, Finish::Stop));
                continue;
            }
            s.history.push(token);
            s.generated += 1;
            made += 1;
            self.send_text(s);
            if s.generated >= s.job.params.max_tokens as usize {
                finished.push((i, Finish::Length));
            }
        }
        self.metrics.tokens("generated", made);
        for (i, finish) in finished.into_iter().rev() {
            let mut s = live.swap_remove(i);
            self.send_rest(&mut s);
            let tokens = s.history[s.job.prompt.len()..].to_vec();
            let _ = s.job.events.send(Event::Done { tokens, finish });
            self.release();
        }
    }

    /// Sends the text the answer's tokens add, once it is whole characters (a character can
    /// span tokens; its first bytes alone decode to U+FFFD).
    fn send_text(&self, s: &mut StreamState) {
        let answer = &s.history[s.job.prompt.len()..];
        let Ok(text) = self.vocabulary.decode(answer) else {
            return;
        };
        if text.ends_with('\u{FFFD}') || text.len() <= s.sent || !text.is_char_boundary(s.sent) {
            return;
        }
        let _ = s.job.events.send(Event::Text(text[s.sent..].to_owned()));
        s.sent = text.len();
    }

    /// At the end: whatever text is left, an unfinished character included.
    fn send_rest(&self, s: &mut StreamState) {
        let answer = &s.history[s.job.prompt.len()..];
        if let Ok(text) = self.vocabulary.decode(answer)
            && text.len() > s.sent
            && text.is_char_boundary(s.sent)
        {
            let _ = s.job.events.send(Event::Text(text[s.sent..].to_owned()));
            s.sent = text.len();
        }
    }
}
