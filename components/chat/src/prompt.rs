//! The prompt a reply is generated from: a dialog's messages in the language model's chat
//! format, as many of the latest as fit the model's context.
//!
//! Roles: `system`, `user` and `assistant` are the chat format's own and pass through. The
//! chat format has no `tool` turn the model was trained on, so a tool's message is given to
//! the model as a user's turn that says it is a tool's output (and which tool, when the
//! message names it), which a small instruction-tuned model does read as information to use.
//! Names of users and models are left out: the format has no place for them.
//!
//! What fits: the component cannot count tokens (the tokenizer is the host's), so the first
//! try is an estimate from the text's length ([`first_guess`]); when the host still says the
//! prompt is past the context, the oldest quarter of what was kept is left out and the call
//! is made again ([`fewer`]). A dialog's opening system message, if it has one, is always
//! kept: it is the dialog's instructions, not its history.

use edge_api::chat::{Message, Role};
use edge_api::language_model::{self, CONTEXT_TOKENS};
use std::borrow::Cow;

/// Bytes of text per token the first guess counts on (SmolLM2's tokenizer makes about 4.5
/// of English per token; text denser than this costs one more try, not a wrong answer).
const BYTES_PER_TOKEN: usize = 4;
/// Tokens a turn of the chat format costs besides its text (`<|im_start|>role\n`, the end).
const TURN_TOKENS: usize = 5;

/// One message as the model reads it: its role in the chat format and its text.
pub fn turn(message: &Message) -> (&'static str, Cow<'_, str>) {
    let text = Cow::Borrowed(message.content.as_str());
    match message.role {
        Role::System => ("system", text),
        Role::User => ("user", text),
        Role::Assistant => ("assistant", text),
        Role::Tool => {
            let tool = match &message.name {
                Some(name) => format!("The tool `{name}`"),
                None => "A tool".to_owned(),
            };
            (
                "user",
                Cow::Owned(format!("{tool} returned:\n{}", message.content)),
            )
        }
    }
}

/// The part of a dialog a prompt is made of: its opening system message (if any) and the
/// latest messages after it.
pub struct Window<'a> {
    pub instructions: Option<&'a Message>,
    pub latest: &'a [Message],
    /// Messages of the dialog left out (the oldest ones after the instructions).
    pub left_out: usize,
}

impl<'a> Window<'a> {
    /// The dialog's instructions and its latest `keep` other messages.
    pub fn new(messages: &'a [Message], keep: usize) -> Self {
        let (instructions, rest) = match messages.split_first() {
            Some((first, rest)) if first.role == Role::System => (Some(first), rest),
            _ => (None, messages),
        };
        let keep = keep.min(rest.len());
        Self {
            instructions,
            latest: &rest[rest.len() - keep..],
            left_out: rest.len() - keep,
        }
    }

    /// Messages the prompt holds.
    pub fn used(&self) -> usize {
        self.latest.len() + usize::from(self.instructions.is_some())
    }

    /// The prompt: these messages in the chat format, ending where the assistant's next
    /// message begins.
    pub fn prompt(&self) -> String {
        let turns: Vec<(&str, Cow<'_, str>)> = self
            .instructions
            .into_iter()
            .chain(self.latest)
            .map(turn)
            .collect();
        language_model::chat_prompt(turns.iter().map(|(role, text)| (*role, text.as_ref())))
    }
}

/// How many of the latest messages (after the opening system message) to try first: those
/// whose estimated tokens, with the instructions', leave `max_tokens` free in the context;
/// at least one, so the message being answered is always tried.
pub fn first_guess(messages: &[Message], max_tokens: usize) -> usize {
    let all = Window::new(messages, usize::MAX);
    let estimate = |m: &Message| m.content.len().div_ceil(BYTES_PER_TOKEN) + TURN_TOKENS;
    let mut used = TURN_TOKENS
        + all.instructions.map_or(
            // The default system message the chat format adds.
            language_model::DEFAULT_SYSTEM
                .len()
                .div_ceil(BYTES_PER_TOKEN)
                + TURN_TOKENS,
            estimate,
        );
    let room = CONTEXT_TOKENS.saturating_sub(max_tokens);
    let mut keep = 0;
    for message in all.latest.iter().rev() {
        used += estimate(message);
        if used > room {
            break;
        }
        keep += 1;
    }
    keep.max(1)
}

/// The next try after `keep` messages were too many: a quarter fewer, at least one fewer.
pub fn fewer(keep: usize) -> usize {
    keep - (keep / 4).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(role: Role, content: &str) -> Message {
        Message {
            id: content.to_owned(),
            role,
            content: content.to_owned(),
            created: "2026-01-01T00:00:00.000Z".to_owned(),
            name: None,
            model: None,
            metadata: None,
        }
    }

    #[test]
    fn roles_map_onto_the_chat_format() {
        let mut tool = message(Role::Tool, "42");
        assert_eq!(turn(&tool), ("user", Cow::from("A tool returned:\n42")));
        tool.name = Some("calc".into());
        assert_eq!(
            turn(&tool),
            ("user", Cow::from("The tool `calc` returned:\n42"))
        );
        let dialog = [
            message(Role::System, "Be brief."),
            message(Role::User, "Hi"),
            message(Role::Assistant, "Hello"),
        ];
        assert_eq!(
            Window::new(&dialog, 9).prompt(),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n\
             <|im_start|>assistant\nHello<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn a_window_keeps_the_instructions_and_the_latest_messages() {
        let dialog: Vec<Message> = std::iter::once(message(Role::System, "rules"))
            .chain((0..5).map(|i| message(Role::User, &format!("m{i}"))))
            .collect();
        let w = Window::new(&dialog, 2);
        assert_eq!(w.instructions.map(|m| m.content.as_str()), Some("rules"));
        let kept: Vec<&str> = w.latest.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(kept, ["m3", "m4"]);
        assert_eq!((w.used(), w.left_out), (3, 3));
        // Without a system message first, the default one leads the prompt.
        let w = Window::new(&dialog[1..], 1);
        assert!(w.instructions.is_none());
        assert!(w.prompt().contains(language_model::DEFAULT_SYSTEM));
        assert!(!w.prompt().contains("m3"));
    }

    #[test]
    fn the_first_guess_fits_the_estimate_and_tries_at_least_one() {
        let short: Vec<Message> = (0..10)
            .map(|i| message(Role::User, &format!("m{i}")))
            .collect();
        assert_eq!(first_guess(&short, 128), 10);
        // 1,000 messages of 400 bytes: about 105 tokens each, so 18 leave 128 free.
        let long: Vec<Message> = (0..1000)
            .map(|_| message(Role::User, &"x".repeat(400)))
            .collect();
        let keep = first_guess(&long, 128);
        assert!((15..=18).contains(&keep), "{keep}");
        let huge = [message(Role::User, &"y".repeat(100_000))];
        assert_eq!(first_guess(&huge, 128), 1);
        assert_eq!((fewer(8), fewer(3), fewer(1)), (6, 2, 0));
    }
}
