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

use super::llama::{Cache, Llama, Run};
use super::sampling::{self, Params};
use super::vocabulary::{Message, Vocabulary};
use rand::SeedableRng;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;
use tokio::sync::mpsc as events;

/// Streams advanced together.
pub const MAX_STREAMS: usize = 8;
/// Requests that may wait for a stream.
pub const MAX_WAITING: usize = 32;
/// The most tokens one request may ask for.
pub const MAX_NEW_TOKENS: u32 = 1024;
/// Prompt tokens one stream adds to a pass.
const PROMPT_CHUNK: usize = 256;
/// What a caller turned away for a full queue is told to wait, in seconds.
pub const RETRY_AFTER_SECONDS: u64 = 2;

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

/// Why a stream ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Finish {
    /// The model ended its turn.
    Stop,
    /// `max_tokens` were made.
    Length,
}

/// What a stream sends its caller.
#[derive(Debug)]
pub enum Event {
    /// More of the answer's text.
    Text(String),
    /// The end: every generated token (the end-of-turn token left out), and why it ended.
    Done { tokens: Vec<u32>, finish: Finish },
    /// It broke off: the deadline passed, or the model failed.
    Failed(String),
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

struct Job {
    prompt: Vec<u32>,
    params: Params,
    deadline: Option<Instant>,
    events: events::UnboundedSender<Event>,
}

/// A handle on the model's thread; cloning shares it.
#[derive(Clone)]
pub struct Generator {
    queue: mpsc::Sender<Job>,
    /// Requests taken and not finished (waiting or under way).
    pending: Arc<AtomicUsize>,
    vocabulary: Arc<Vocabulary>,
    context: usize,
    metrics: crate::metrics::Generation,
}

impl Generator {
    pub fn start(name: &str, llama: Llama, vocabulary: Vocabulary) -> std::io::Result<Self> {
        let (queue, jobs) = mpsc::channel();
        let pending = Arc::new(AtomicUsize::new(0));
        let vocabulary = Arc::new(vocabulary);
        let context = llama.context();
        let metrics = crate::metrics::Generation::new(name);
        let thread = Thread {
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
        if taken >= MAX_STREAMS + MAX_WAITING {
            self.pending.fetch_sub(1, Ordering::SeqCst);
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
            self.pending.fetch_sub(1, Ordering::SeqCst);
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
                Event::Failed(message) => return Err(GenerateError::Runtime(message)),
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

/// One stream under way on the thread.
struct Live {
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

struct Thread {
    llama: Llama,
    vocabulary: Arc<Vocabulary>,
    jobs: mpsc::Receiver<Job>,
    pending: Arc<AtomicUsize>,
    metrics: crate::metrics::Generation,
}

impl Thread {
    fn run(self) {
        let mut live: Vec<Live> = Vec::new();
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
                    self.pending.fetch_sub(1, Ordering::SeqCst);
                }
                keep
            });
            self.metrics.queue(self.pending.load(Ordering::SeqCst));
            if !live.is_empty() {
                self.step(&mut live);
            }
        }
    }

    fn open(&self, job: Job) -> Live {
        self.metrics.tokens("prompt", job.prompt.len());
        let room = job.prompt.len() + job.params.max_tokens as usize;
        Live {
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
    fn still_wanted(&self, s: &Live) -> bool {
        if s.job.events.is_closed() {
            return false;
        }
        if s.job.deadline.is_some_and(|d| Instant::now() >= d) {
            let _ = s.job.events.send(Event::Failed(format!(
                "the request's deadline passed after {} generated tokens",
                s.generated
            )));
            return false;
        }
        true
    }

    /// One pass of the network over every live stream, then each stream's next token.
    fn step(&self, live: &mut Vec<Live>) {
        let inputs: Vec<Vec<u32>> = live
            .iter()
            .map(|s| match s.prompt_left {
                0 => vec![*s.history.last().expect("a stream holds its prompt")],
                left => {
                    let start = s.job.prompt.len() - left;
                    s.job.prompt[start..start + left.min(PROMPT_CHUNK)].to_vec()
                }
            })
            .collect();
        let mut runs: Vec<Run> = live
            .iter_mut()
            .zip(&inputs)
            .map(|(s, tokens)| Run {
                cache: &mut s.cache,
                tokens,
            })
            .collect();
        let logits = match self.llama.forward(&mut runs) {
            Ok(l) => l,
            Err(e) => {
                for s in live.drain(..) {
                    let _ = s
                        .job
                        .events
                        .send(Event::Failed(format!("the model failed: {e:#}")));
                    self.pending.fetch_sub(1, Ordering::SeqCst);
                }
                return;
            }
        };
        drop(runs);
        let mut finished = Vec::new();
        let mut made = 0;
        for (i, (s, mut logits)) in live.iter_mut().zip(logits).enumerate() {
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
            self.pending.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Sends the text the answer's tokens add, once it is whole characters (a character can
    /// span tokens; its first bytes alone decode to U+FFFD).
    fn send_text(&self, s: &mut Live) {
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
    fn send_rest(&self, s: &mut Live) {
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
