// The chats pages: the list of dialogs, one dialog's messages by role, asking the language
// model for the next message (ask.js) and appending a message, with the admin token. Long
// lists are shown a page at a time.

import { call } from "./api.js";
import { askForm } from "./ask.js";
import { h, replace, errorBox, num, when, pager, blank } from "./dom.js";

const CHATS_PER_PAGE = 50;
const MESSAGES_PER_PAGE = 100;
const ROLES = ["user", "assistant", "system", "tool"];
/** The admin token lives for this browser tab only, and only once someone enters it. */
const TOKEN_KEY = "console.chatAdminToken";

function chatRow(chat) {
  return h("tr", {},
    h("th", { scope: "row" }, h("a", { href: `#/chats/${encodeURIComponent(chat.id)}` }, chat.chatName)),
    h("td", { class: "num" }, num(chat.numMessages)),
    h("td", {}, when(chat.updated)),
    h("td", {}, when(chat.created)));
}

export async function chatsPage() {
  const chats = await call("/api/chats");
  chats.sort((a, b) => String(b.updated).localeCompare(String(a.updated)));
  const area = h("div", {});
  const filter = h("input", { id: "chat-filter", type: "search", autocomplete: "off" });
  function render() {
    const words = filter.value.trim().toLowerCase();
    const shown = words ? chats.filter((c) => `${c.chatName} ${c.id}`.toLowerCase().includes(words)) : chats;
    if (!shown.length) {
      replace(area, h("p", { class: "muted" }, chats.length ? "No chat matches." : "There are no chats yet."));
      return;
    }
    const body = h("tbody", {});
    const more = pager(shown, CHATS_PER_PAGE, chatRow, body, "chats");
    replace(area, h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "Chats" },
      h("table", { class: "chats" },
        h("caption", {}, `${shown.length} chat${shown.length === 1 ? "" : "s"}, latest first`),
        h("thead", {}, h("tr", {}, ["Name", "Messages", "Updated", "Created"].map((t) => h("th", { scope: "col", class: t === "Messages" ? "num" : undefined }, t)))),
        body)), more);
  }
  filter.addEventListener("input", render);
  render();
  return h("section", {},
    h("h1", {}, "Chats"),
    h("div", { class: "field" }, h("label", { for: "chat-filter" }, "Filter by name or id"), filter),
    area);
}

function messageItem(m) {
  // The role is capitalized by the style sheet; a name or a model's name is shown as written.
  const by = [m.name, m.model].filter(Boolean).join(" · ");
  return h("li", { class: `message role-${ROLES.includes(m.role) ? m.role : "other"}` },
    h("div", { class: "meta" }, h("strong", { class: "role" }, m.role),
      by ? [" · ", h("strong", { class: "by" }, by)] : null, " ", when(m.created)),
    h("p", { class: "content" }, m.content));
}

/** The admin token field both forms of a dialog's page send with their writes. */
function tokenField() {
  return h("input", {
    id: "admin-token", name: "token", type: "password", autocomplete: "off",
    value: sessionStorage.getItem(TOKEN_KEY) ?? "",
  });
}

function rememberToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

function appendForm(id, token, onAppended) {
  const status = h("div", { id: "append-status", "aria-live": "polite" });
  const role = h("select", { id: "message-role", name: "role" }, ROLES.map((r) => h("option", { value: r }, r)));
  const content = h("textarea", { id: "message-content", name: "content", rows: 3, required: true });
  const form = h("form", { id: "append-form", novalidate: true },
    h("div", { class: "field" }, h("label", { for: "message-role" }, "Role"), role),
    h("div", { class: "field" }, h("label", { for: "message-content" }, "Message"), content),
    h("button", { type: "submit" }, "Append message"),
    status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (blank(token, "enter the admin token first", status)) return;
    if (blank(content, "the message is empty", status)) return;
    replace(status, h("p", { role: "status" }, "Sending…"));
    try {
      const message = await call(`/api/dialog/messages?id=${encodeURIComponent(id)}`, {
        method: "POST", token: token.value.trim(), body: { role: role.value, content: content.value },
      });
      rememberToken(token.value.trim());
      content.value = "";
      replace(status, h("p", { class: "ok", role: "status" }, `Appended message ${message.id}.`));
      onAppended(message);
    } catch (e) {
      replace(status, errorBox(e, "Could not append"));
    }
    status.scrollIntoView({ block: "nearest" });
  });
  return h("section", {}, h("h2", {}, "Append a message"), form);
}

export async function dialogPage(id) {
  const dialog = await call(`/api/dialog?id=${encodeURIComponent(id)}`);
  const list = h("ol", { class: "messages", id: "messages" });
  const count = h("span", {}, num(dialog.messages.length));
  const messages = h("div", {}, list,
    pager(dialog.messages, MESSAGES_PER_PAGE, messageItem, list, "messages"));
  const token = tokenField();
  function show(message) {
    // Shown at once when the list is already at its end; otherwise "show more" reaches it.
    const atEnd = list.children.length === dialog.messages.length;
    dialog.messages.push(message);
    if (atEnd) list.append(messageItem(message));
    count.textContent = num(dialog.messages.length);
  }
  return h("article", {},
    h("p", {}, h("a", { href: "#/chats" }, "← All chats")),
    h("h1", {}, dialog.chatName),
    h("p", { class: "muted" }, "id ", h("code", {}, dialog.id), " · ", count, " messages · updated ",
      when(dialog.updated)),
    messages,
    h("div", { class: "field" }, h("label", { for: "admin-token" }, "Admin token (for writing)"), token),
    askForm(dialog.id, token, { onMessage: show, remember: rememberToken }),
    appendForm(dialog.id, token, show));
}
