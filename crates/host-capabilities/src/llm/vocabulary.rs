//! What a GGUF file says about text: its byte-pair tokenizer, the tokens that end a turn, and
//! its chat template (a Jinja template, rendered with minijinja as Hugging Face renders it).
//!
//! The tokenizer is candle's reading of the file's vocabulary and merges, with one fix: for the
//! `smollm` pre-tokenizer candle falls back to GPT-2's with a space added in front of the text,
//! while the model was trained (and llama.cpp tokenizes) with every digit split apart and no
//! space added. Prompts tokenize as llama.cpp tokenizes them: the tests compare the two.

use anyhow::{Context, Result, anyhow, bail};
use candle_core::quantized::gguf_file::Content;
use candle_core::quantized::tokenizer::TokenizerFromGguf;
use serde::{Deserialize, Serialize};
use tokenizers::Tokenizer;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;

/// Text that ends a turn in the chat formats this host knows, when the file names no
/// end-of-generation token of its own besides its end-of-sequence token.
const TURN_ENDS: &[&str] = &["<|im_end|>", "<|endoftext|>", "<|eot_id|>", "</s>"];

/// Placeholder marks around a message's number in a rendered template (private-use
/// characters: no template writes them).
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

pub struct Vocabulary {
    tokenizer: Tokenizer,
    /// The same tokenizer reading special tokens' text as text (a chat message's words).
    literal: Tokenizer,
    /// The most bytes of text one token stands for: a text longer than the context times this
    /// cannot fit, and is refused before it is tokenized.
    longest: usize,
    /// Tokens after which generation stops (not part of the answer).
    ends: Vec<u32>,
    template: Option<String>,
}

/// One message of a chat, as templates read them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    pub content: String,
}

impl Vocabulary {
    pub fn read(content: &Content) -> Result<Self> {
        let mut tokenizer = Tokenizer::from_gguf(content).map_err(|e| anyhow!("{e}"))?;
        let meta = |key: &str| content.metadata.get(key);
        let pre = meta("tokenizer.ggml.pre").and_then(|v| v.to_string().ok());
        if pre.is_some_and(|p| p == "smollm") {
            tokenizer.with_pre_tokenizer(Some(Sequence::new(vec![
                Digits::new(true).into(),
                ByteLevel::new(false, true, true).into(),
            ])));
        }
        let mut ends = Vec::new();
        for key in ["tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"] {
            if let Some(id) = meta(key).and_then(|v| v.to_u32().ok()) {
                ends.push(id);
            }
        }
        ends.extend(TURN_ENDS.iter().filter_map(|t| tokenizer.token_to_id(t)));
        ends.sort_unstable();
        ends.dedup();
        if ends.is_empty() {
            bail!("the GGUF file names no token that ends a turn");
        }
        let template = meta("tokenizer.chat_template")
            .and_then(|v| v.to_string().ok())
            .cloned();
        let mut literal = tokenizer.clone();
        literal.set_encode_special_tokens(true);
        // Byte-level tokens write each byte as one character.
        let longest = tokenizer
            .get_vocab(true)
            .keys()
            .map(|t| t.chars().count())
            .max()
            .unwrap_or(1);
        Ok(Self {
            tokenizer,
            literal,
            longest: longest.max(1),
            ends,
            template,
        })
    }

    /// `text`'s tokens. Special tokens written in the text (`<|im_start|>`) are those tokens,
    /// as llama.cpp reads a prompt; nothing is added in front.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        Ok(self
            .tokenizer
            .encode_fast(text, false)
            .map_err(|e| anyhow!("tokenizing: {e}"))?
            .get_ids()
            .to_vec())
    }

    /// The tokens of `messages` written with the chat template: the template's own text with
    /// its markers as special tokens, each message's text as text only. The template is
    /// rendered with a placeholder for each message's text, and the pieces tokenized apart;
    /// for ordinary text this gives the tokens of the rendered string (tested on the
    /// reference chats), while `<|im_end|>` written in a message stays those characters.
    pub fn encode_chat(&self, messages: &[Message]) -> Result<Vec<u32>> {
        let placeholders: Vec<Message> = (0..messages.len())
            .map(|i| Message {
                role: messages[i].role.clone(),
                content: format!("{OPEN}{i}{CLOSE}"),
            })
            .collect();
        let rendered = self.chat_prompt(&placeholders)?;
        let mut ids = Vec::new();
        let mut rest = rendered.as_str();
        while let Some(start) = rest.find(OPEN) {
            ids.extend(self.encode(&rest[..start])?);
            let after = &rest[start + OPEN.len_utf8()..];
            let end = after.find(CLOSE).context("a placeholder left open")?;
            let i: usize = after[..end].parse().context("a placeholder's number")?;
            let text = &messages
                .get(i)
                .context("a placeholder past the messages")?
                .content;
            let literal = self.literal.encode_fast(text.as_str(), false);
            ids.extend(literal.map_err(|e| anyhow!("tokenizing: {e}"))?.get_ids());
            rest = &after[end + CLOSE.len_utf8()..];
        }
        ids.extend(self.encode(rest)?);
        Ok(ids)
    }

    /// The most bytes of text one token stands for.
    pub fn longest_token(&self) -> usize {
        self.longest
    }

    /// The text of `ids`, special tokens left out.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        self.tokenizer
            .decode(ids, true)
            .map_err(|e| anyhow!("decoding: {e}"))
    }

    pub fn ends_turn(&self, id: u32) -> bool {
        self.ends.binary_search(&id).is_ok()
    }

    /// `messages` as the model's chat template writes them, ending where the assistant's
    /// answer begins.
    pub fn chat_prompt(&self, messages: &[Message]) -> Result<String> {
        let template = self
            .template
            .as_deref()
            .context("the model's file has no chat template")?;
        let mut env = minijinja::Environment::new();
        env.set_unknown_method_callback(minijinja_contrib_free_unknown);
        env.add_template("chat", template)
            .map_err(|e| anyhow!("the model's chat template does not parse: {e}"))?;
        env.get_template("chat")
            .and_then(|t| {
                t.render(minijinja::context! {
                    messages => messages,
                    add_generation_prompt => true,
                    bos_token => "",
                    eos_token => "",
                })
            })
            .map_err(|e| anyhow!("rendering the chat template: {e}"))
    }
}

/// Templates written for Python's Jinja call string methods (`.strip()`); the common ones are
/// answered here so such a template renders instead of failing.
fn minijinja_contrib_free_unknown(
    _state: &minijinja::State,
    value: &minijinja::Value,
    method: &str,
    _args: &[minijinja::Value],
) -> Result<minijinja::Value, minijinja::Error> {
    match (value.as_str(), method) {
        (Some(s), "strip") => Ok(s.trim().into()),
        (Some(s), "lstrip") => Ok(s.trim_start().into()),
        (Some(s), "rstrip") => Ok(s.trim_end().into()),
        _ => Err(minijinja::Error::new(
            minijinja::ErrorKind::UnknownMethod,
            format!("no method `{method}` here"),
        )),
    }
}
