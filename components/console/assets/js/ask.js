// Asking the language model on a dialog's page: the user's message is appended, then the chat
// service has the model write the assistant's reply (`POST /api/dialog/reply`), and both are
// shown as they were stored. A reply takes seconds on a CPU, so that call waits longer than
// the page's others.

import { call } from "./api.js";
import { h, replace, errorBox, num, blank } from "./dom.js";

/** How long the page waits for a reply: a long one on a busy machine takes a minute. */
const REPLY_TIMEOUT_MS = 180000;
/** A few sentences: the small model rambles past that, and it keeps the wait short. */
const DEFAULT_MAX_TOKENS = 64;

/** What the answer says about the reply: its tokens, and what of the dialog it could read. */
function replied(answer) {
  const { usage, context } = answer;
  const parts = [`Replied in ${num(usage.generatedTokens)} tokens, from a prompt of ${num(usage.promptTokens)}.`];
  if (context.messagesLeftOut > 0) {
    parts.push(` The oldest ${num(context.messagesLeftOut)} messages did not fit the model's context and were left out.`);
  }
  return parts.join("");
}

/** The form: a message, the reply's length, a button. `token` is the page's admin token
 *  field; `onMessage` shows a stored message; `remember` keeps a token that worked. */
export function askForm(id, token, { onMessage, remember }) {
  const status = h("div", { id: "ask-status", "aria-live": "polite" });
  const content = h("textarea", { id: "ask-content", name: "content", rows: 3, required: true });
  const maxTokens = h("input", {
    id: "ask-max-tokens", name: "max_tokens", type: "number", min: 1, max: 1024, step: 1,
    value: DEFAULT_MAX_TOKENS, inputmode: "numeric",
  });
  const button = h("button", { type: "submit" }, "Send and get the reply");
  const form = h("form", { id: "ask-form", novalidate: true },
    h("div", { class: "field" }, h("label", { for: "ask-content" }, "Your message"), content),
    h("div", { class: "field" }, h("label", { for: "ask-max-tokens" }, "Longest reply, in tokens"), maxTokens),
    button,
    status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (blank(token, "enter the admin token first", status)) return;
    if (blank(content, "the message is empty", status)) return;
    const secret = token.value.trim();
    button.disabled = true;
    try {
      await ask(id, secret, content, Number(maxTokens.value), status, { onMessage, remember });
    } finally {
      button.disabled = false;
      status.scrollIntoView({ block: "nearest" });
    }
  });
  return h("section", {}, h("h2", {}, "Ask the assistant"),
    h("p", { class: "muted" }, "The host's small language model writes the assistant's next message from the dialog so far. It is a 135-million-parameter model: fine for a short, simple reply; its facts are often wrong."),
    form);
}

async function ask(id, secret, content, maxTokens, status, { onMessage, remember }) {
  const dialog = encodeURIComponent(id);
  replace(status, h("p", { role: "status" }, "Sending…"));
  let mine;
  try {
    mine = await call(`/api/dialog/messages?id=${dialog}`, {
      method: "POST", token: secret, body: { role: "user", content: content.value },
    });
  } catch (e) {
    replace(status, errorBox(e, "Could not send"));
    return;
  }
  remember(secret);
  content.value = "";
  onMessage(mine);
  replace(status, h("p", { role: "status" }, "The assistant is writing…"));
  try {
    const answer = await call(`/api/dialog/reply?id=${dialog}`, {
      method: "POST", token: secret, body: { max_tokens: maxTokens }, timeoutMs: REPLY_TIMEOUT_MS,
    });
    onMessage(answer.message);
    replace(status, h("p", { class: "ok", role: "status" }, replied(answer)));
  } catch (e) {
    replace(status, errorBox(e, "Your message is kept, but no reply was written"));
  }
}
