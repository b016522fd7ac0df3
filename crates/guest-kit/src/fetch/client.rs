//! The requests themselves, through `wasi:http/outgoing-handler`: every URL's request is
//! sent, then one loop polls all that are unfinished (their answers, their bodies) together
//! with a clock pollable for the deadline, and moves each along as it becomes ready. A
//! redirect puts its URL's slot back to waiting on a new request.

use super::messages::{self, Hop, Waiting};
use super::urls::{authority, is_redirect, path_with_query, redirect_target};
use super::{FetchError, Fetched, MAX_REDIRECTS, USER_AGENT};
use std::time::{Duration, Instant};
use url::Url;
use wasi::clocks::monotonic_clock;
use wasi::http::outgoing_handler;
use wasi::http::types::{
    ErrorCode, Fields, FutureIncomingResponse, IncomingBody, IncomingResponse, Method,
    OutgoingRequest, RequestOptions, Scheme, http_error_code,
};
use wasi::io::poll::{self, Pollable};
use wasi::io::streams::{InputStream, StreamError};

/// Bytes asked for per read of a body.
const READ_CHUNK: u64 = 64 * 1024;

/// How near the deadline a host's timeout counts as the deadline itself.
const DEADLINE_SLACK: Duration = Duration::from_millis(100);

/// Fetches every `Ok` URL of `urls` (an `Err` is that URL's result already).
pub(super) fn fetch_all(
    urls: Vec<Result<Url, FetchError>>,
    max_bytes: u64,
    deadline: Instant,
) -> Vec<Result<Fetched, FetchError>> {
    let allowed = deadline.saturating_duration_since(Instant::now());
    let mut slots: Vec<Slot> = urls
        .into_iter()
        .map(|url| match url {
            Ok(url) => Slot::start(url, deadline, allowed),
            Err(e) => Slot::done(e),
        })
        .collect();
    let ctx = Context {
        max_bytes,
        deadline,
        allowed,
    };
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            for slot in &mut slots {
                slot.give_up(allowed);
            }
        }
        // Pollables are children of what they watch: made afresh each round, dropped
        // before any of it is touched.
        let watched: Vec<(usize, Pollable)> = slots
            .iter()
            .enumerate()
            .filter_map(|(i, slot)| slot.subscribe().map(|p| (i, p)))
            .collect();
        if watched.is_empty() {
            break;
        }
        let timer = monotonic_clock::subscribe_duration(nanos(left));
        let mut all: Vec<&Pollable> = watched.iter().map(|(_, p)| p).collect();
        all.push(&timer);
        let ready = poll::poll(&all);
        drop(all);
        let ready: Vec<usize> = ready
            .into_iter()
            .filter_map(|at| watched.get(at as usize).map(|(slot, _)| *slot))
            .collect();
        drop(watched);
        drop(timer);
        for i in ready {
            slots[i].advance(&ctx);
        }
    }
    slots.into_iter().map(Slot::finish).collect()
}

/// What every slot's progress is measured against.
struct Context {
    max_bytes: u64,
    deadline: Instant,
    /// The whole time the fetch was given, for messages.
    allowed: Duration,
}

/// One URL's fetch.
struct Slot {
    first: Option<Url>,
    /// The URL requested now, and the one that redirected to it.
    url: Option<Url>,
    from: Option<Url>,
    redirects: usize,
    state: State,
}

enum State {
    /// Waiting for the answer's head.
    Answer(FutureIncomingResponse),
    /// Reading the body.
    Body(Body),
    Done(Result<Fetched, FetchError>),
}

/// A 200's body being read. Fields drop in order: the stream before the body it belongs to,
/// the body before its response (WASI child resources must go first).
struct Body {
    stream: InputStream,
    _body: IncomingBody,
    _response: IncomingResponse,
    bytes: Vec<u8>,
    declared: Option<u64>,
    content_type: Option<String>,
}

impl Slot {
    fn start(url: Url, deadline: Instant, allowed: Duration) -> Self {
        let mut slot = Self {
            first: Some(url.clone()),
            url: Some(url),
            from: None,
            redirects: 0,
            state: State::Done(Err(FetchError::Failed(String::new()))),
        };
        slot.state = slot.send(deadline, allowed);
        slot
    }

    fn done(e: FetchError) -> Self {
        Self {
            first: None,
            url: None,
            from: None,
            redirects: 0,
            state: State::Done(Err(e)),
        }
    }

    fn hop(&self) -> Option<Hop<'_>> {
        self.url.as_ref().map(|url| Hop {
            url,
            from: self.from.as_ref(),
        })
    }

    /// Sends the request for the current URL: the state that follows.
    fn send(&self, deadline: Instant, allowed: Duration) -> State {
        let (Some(url), Some(hop)) = (self.url.as_ref(), self.hop()) else {
            return State::Done(Err(FetchError::Failed("internal error: no URL".into())));
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return State::Done(Err(messages::no_time_left(&hop, allowed)));
        }
        match request(url, left) {
            Ok(request) => match outgoing_handler::handle(request.0, Some(request.1)) {
                Ok(future) => State::Answer(future),
                Err(code) => State::Done(Err(messages::transport(&hop, &code))),
            },
            Err(e) => State::Done(Err(e)),
        }
    }

    /// What to wait on next, if the fetch is not over.
    fn subscribe(&self) -> Option<Pollable> {
        match &self.state {
            State::Answer(future) => Some(future.subscribe()),
            State::Body(body) => Some(body.stream.subscribe()),
            State::Done(_) => None,
        }
    }

    /// Ends an unfinished fetch at the deadline.
    fn give_up(&mut self, allowed: Duration) {
        let waiting = match &self.state {
            State::Answer(_) => Waiting::Answer,
            State::Body(body) => Waiting::Body(body.bytes.len()),
            State::Done(_) => return,
        };
        if let Some(hop) = self.hop() {
            let e = messages::timed_out(&hop, allowed, waiting);
            self.state = State::Done(Err(e));
        }
    }

    /// Moves the fetch along after its pollable was ready.
    fn advance(&mut self, ctx: &Context) {
        let state = std::mem::replace(&mut self.state, State::Done(Ok(empty())));
        self.state = match state {
            State::Answer(future) => match future.get() {
                None => State::Answer(future),
                Some(Err(())) => State::Done(Err(FetchError::Failed(
                    "internal error: answer taken".into(),
                ))),
                Some(Ok(Err(code))) => State::Done(Err(self.failure(&code, ctx, Waiting::Answer))),
                Some(Ok(Ok(response))) => {
                    drop(future);
                    self.answered(response, ctx)
                }
            },
            State::Body(body) => self.read(body, ctx),
            done @ State::Done(_) => done,
        };
    }

    /// wasi-http's failure `code`. The timeouts passed in the request's options end at the
    /// deadline too, and may beat the clock pollable to it: those say the deadline passed.
    fn failure(&self, code: &ErrorCode, ctx: &Context, waiting: Waiting) -> FetchError {
        let Some(hop) = self.hop() else {
            return FetchError::Failed("internal error: no URL".into());
        };
        let timeout = matches!(
            code,
            ErrorCode::ConnectionTimeout
                | ErrorCode::ConnectionReadTimeout
                | ErrorCode::HttpResponseTimeout
                | ErrorCode::DnsTimeout
        );
        if timeout && Instant::now() + DEADLINE_SLACK >= ctx.deadline {
            return messages::timed_out(&hop, ctx.allowed, waiting);
        }
        messages::transport(&hop, code)
    }

    /// The answer's head came: a redirect to follow, the 200 whose body to read, or the end.
    fn answered(&mut self, response: IncomingResponse, ctx: &Context) -> State {
        let status = response.status();
        let headers = response.headers();
        let first_value = |name: &str| {
            headers
                .get(&name.to_owned())
                .into_iter()
                .next()
                .map(|v| String::from_utf8_lossy(&v).trim().to_owned())
        };
        let location = first_value("location");
        let content_type = first_value("content-type");
        let declared = first_value("content-length").and_then(|v| v.parse::<u64>().ok());
        drop(headers);
        let (Some(url), Some(hop)) = (self.url.as_ref(), self.hop()) else {
            return State::Done(Err(FetchError::Failed("internal error: no URL".into())));
        };
        if is_redirect(status) {
            drop(response);
            let Some(location) = location else {
                return State::Done(Err(messages::redirect_without_location(&hop, status)));
            };
            if self.redirects >= MAX_REDIRECTS {
                let first = self.first.as_ref().unwrap_or(url);
                return State::Done(Err(messages::too_many_redirects(first, &hop)));
            }
            let next = match redirect_target(url, &location) {
                Ok(next) => next,
                Err(e) => return State::Done(Err(e)),
            };
            self.redirects += 1;
            self.from = self.url.replace(next);
            return self.send(ctx.deadline, ctx.allowed);
        }
        if status != 200 {
            return State::Done(Err(messages::bad_status(&hop, status)));
        }
        if let Some(n) = declared.filter(|n| *n > ctx.max_bytes) {
            return State::Done(Err(messages::declared_too_large(&hop, n, ctx.max_bytes)));
        }
        let unreadable = || State::Done(Err(messages::read_failed(&hop, "no body")));
        let Ok(body) = response.consume() else {
            return unreadable();
        };
        let Ok(stream) = body.stream() else {
            return unreadable();
        };
        let body = Body {
            stream,
            _body: body,
            _response: response,
            bytes: Vec::new(),
            declared,
            content_type,
        };
        // An empty body declared as such is complete without another round.
        if declared == Some(0) {
            return State::Done(Ok(self.fetched(body)));
        }
        State::Body(body)
    }

    /// Reads what has arrived of the body, without blocking.
    fn read(&self, mut body: Body, ctx: &Context) -> State {
        let Some(hop) = self.hop() else {
            return State::Done(Err(FetchError::Failed("internal error: no URL".into())));
        };
        loop {
            match body.stream.read(READ_CHUNK) {
                Ok(chunk) if chunk.is_empty() => return State::Body(body),
                Ok(chunk) => {
                    if (body.bytes.len() + chunk.len()) as u64 > ctx.max_bytes {
                        return State::Done(Err(messages::read_too_large(&hop, ctx.max_bytes)));
                    }
                    body.bytes.extend_from_slice(&chunk);
                    if body.declared == Some(body.bytes.len() as u64) {
                        return State::Done(Ok(self.fetched(body)));
                    }
                }
                Err(StreamError::Closed) => return State::Done(Ok(self.fetched(body))),
                Err(StreamError::LastOperationFailed(e)) => {
                    let waiting = Waiting::Body(body.bytes.len());
                    return State::Done(Err(match http_error_code(&e) {
                        Some(code) => self.failure(&code, ctx, waiting),
                        None => messages::read_failed(&hop, &e.to_debug_string()),
                    }));
                }
            }
        }
    }

    fn fetched(&self, mut body: Body) -> Fetched {
        Fetched {
            bytes: std::mem::take(&mut body.bytes),
            content_type: body.content_type.take(),
            url: self.url.as_ref().map(Url::to_string).unwrap_or_default(),
        }
    }

    fn finish(self) -> Result<Fetched, FetchError> {
        match self.state {
            State::Done(result) => result,
            // The loop ends only when every slot is done.
            _ => Err(FetchError::Failed(
                "internal error: fetch unfinished".into(),
            )),
        }
    }
}

fn empty() -> Fetched {
    Fetched {
        bytes: Vec::new(),
        content_type: None,
        url: String::new(),
    }
}

/// A GET of `url` with this module's headers, and options bounding each wait by the time
/// `left` (hosts that do not support an option ignore it: the deadline still holds).
fn request(url: &Url, left: Duration) -> Result<(OutgoingRequest, RequestOptions), FetchError> {
    let headers = Fields::from_list(&[
        ("user-agent".to_owned(), USER_AGENT.as_bytes().to_vec()),
        ("accept".to_owned(), b"*/*".to_vec()),
    ])
    .map_err(|e| FetchError::Failed(format!("internal error: request headers: {e:?}")))?;
    let request = OutgoingRequest::new(headers);
    let scheme = if url.scheme() == "https" {
        Scheme::Https
    } else {
        Scheme::Http
    };
    let invalid = || FetchError::BadUrl(format!("{} cannot be requested", super::urls::shown(url)));
    request.set_method(&Method::Get).map_err(|()| invalid())?;
    request.set_scheme(Some(&scheme)).map_err(|()| invalid())?;
    request
        .set_authority(Some(authority(url)))
        .map_err(|()| invalid())?;
    request
        .set_path_with_query(Some(path_with_query(url)))
        .map_err(|()| invalid())?;
    let options = RequestOptions::new();
    let wait = Some(nanos(left).max(1_000_000));
    let _ = options.set_connect_timeout(wait);
    let _ = options.set_first_byte_timeout(wait);
    let _ = options.set_between_bytes_timeout(wait);
    Ok((request, options))
}

/// `d` in a monotonic clock's nanoseconds.
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
