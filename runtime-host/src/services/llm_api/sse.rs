//! `stream: true`: the answer as server-sent events, one chunk per piece of text the generator
//! sends, as OpenAI streams: a first chunk naming the role, the text's chunks, a last chunk
//! with why it ended, the usage alone when `stream_options.include_usage` asked for it, then
//! `data: [DONE]`. A failure once the stream has begun (the deadline passed, the model broke)
//! is an `{"error": ...}` event in place of `[DONE]`, which OpenAI's clients raise.
//!
//! The body owns the generator's receiver: when the client goes away, hyper drops the body
//! and with it the receiver, and the generator stops making tokens for nobody.

use super::chat::Meta;
use bytes::Bytes;
use host_core::capabilities::llm::generator::{Event, Stream};
use host_core::http::responses::HostResponse;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame};
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The streamed answer to one request.
pub fn response(stream: Stream, meta: Meta, include_usage: bool) -> HostResponse {
    let first = meta.chunk(
        json!({"role": "assistant", "content": ""}),
        None,
        include_usage,
    );
    let body = Events {
        prompt_tokens: stream.prompt_tokens,
        events: stream.events,
        meta,
        include_usage,
        out: VecDeque::from([event(&first)]),
        ended: false,
    };
    hyper::Response::builder()
        .status(200)
        .header(hyper::header::CONTENT_TYPE, "text/event-stream")
        .header(hyper::header::CACHE_CONTROL, "no-cache")
        .header(hyper::header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .body(body.map_err(|never| match never {}).boxed_unsync())
        .expect("static response parts are valid")
}

/// One server-sent event carrying `value`.
fn event(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

struct Events {
    prompt_tokens: usize,
    events: tokio::sync::mpsc::UnboundedReceiver<Event>,
    meta: Meta,
    include_usage: bool,
    /// Events written and not yet sent.
    out: VecDeque<Bytes>,
    /// The generator has said its last; what is in `out` ends the body.
    ended: bool,
}

impl Events {
    /// The events that `event` from the generator makes.
    fn take(&mut self, event_: Option<Event>) {
        match event_ {
            Some(Event::Text(piece)) => {
                let chunk = self
                    .meta
                    .chunk(json!({"content": piece}), None, self.include_usage);
                self.out.push_back(event(&chunk));
            }
            Some(Event::Done { tokens, finish }) => {
                let last = self.meta.chunk(json!({}), Some(finish), self.include_usage);
                self.out.push_back(event(&last));
                if self.include_usage {
                    let usage = self.meta.usage_chunk(self.prompt_tokens, tokens.len());
                    self.out.push_back(event(&usage));
                }
                self.out.push_back(Bytes::from_static(b"data: [DONE]\n\n"));
                self.ended = true;
            }
            Some(Event::Failed(message) | Event::Expired(message)) => self.fail(message),
            None => self.fail("the model's thread stopped mid-answer".to_owned()),
        }
    }

    fn fail(&mut self, message: String) {
        let error = json!({"error": {
            "message": message,
            "type": "server_error",
            "code": "model_error",
            "param": null,
        }});
        self.out.push_back(event(&error));
        self.ended = true;
    }
}

impl Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        loop {
            if let Some(bytes) = this.out.pop_front() {
                return Poll::Ready(Some(Ok(Frame::data(bytes))));
            }
            if this.ended {
                return Poll::Ready(None);
            }
            match this.events.poll_recv(cx) {
                Poll::Ready(e) => this.take(e),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}
