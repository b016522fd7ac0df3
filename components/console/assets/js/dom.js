// Building the page from data. Every piece of text goes in as a text node, never as HTML:
// chat messages and model answers are shown exactly as they are and can never run.

/** An element: `h("td", { class: "num" }, "42", otherNode)`. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces everything inside `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A table with a caption, column headers and rows of cells, scrolling sideways on narrow
 *  screens instead of overflowing the page. Each cell carries its column's name
 *  (`data-label`), so a table of class `stack` can show each row as a card on a phone. */
export function table(caption, headers, rows, attrs = {}) {
  const cell = (c, i) => (i === 0
    ? h("th", { scope: "row", "data-label": headers[i] }, c)
    : h("td", { "data-label": headers[i] }, c));
  return h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": caption },
    h("table", attrs,
      h("caption", {}, caption),
      h("thead", {}, h("tr", {}, headers.map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map(cell))))));
}

/** Name and value pairs, as a definition list. */
export function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.map(([name, value]) => [h("dt", {}, name), h("dd", {}, value)]));
}

/** The error box: what went wrong, as the service said it. */
export function errorBox(error, what) {
  const detail = error && error.code ? ` (${error.code}${error.status ? `, HTTP ${error.status}` : ""})` : "";
  return h("div", { class: "error", role: "alert" },
    h("strong", {}, what ? `${what}: ` : "Error: "),
    error && error.message ? error.message : String(error), detail);
}

/** True, with `message` shown in `status` and the field focused, when a form's `field` is
 *  blank: the forms' shared check before anything is sent. */
export function blank(field, message, status) {
  if (field.value.trim()) return false;
  replace(status, errorBox({ message }, "Not sent"));
  field.focus();
  return true;
}

/** A small labelled flag: "ok", "warn" or "bad". */
export function badge(kind, text) {
  return h("span", { class: `badge ${kind}` }, text);
}

/** A number for people: fixed decimals for small values, grouped thousands for large. */
export function num(value, digits = 2) {
  if (typeof value !== "number" || !Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return value.toLocaleString("en");
  return value.toLocaleString("en", { maximumFractionDigits: digits });
}

/** How long ago (or until) a time, in the largest unit that keeps it readable. */
function relative(seconds) {
  const abs = Math.abs(seconds);
  const text = abs < 90 ? `${abs} s`
    : abs < 5400 ? `${Math.round(abs / 60)} min`
      : abs < 172800 ? `${Math.round(abs / 3600)} h`
        : `${Math.round(abs / 86400)} days`;
  return seconds >= 0 ? `${text} ago` : `in ${text}`;
}

/** An ISO 8601 time as local time (with the date unless it is today) and how long ago;
 *  the exact value is the tooltip. A time without a zone is UTC, as the registry writes. */
export function when(iso) {
  if (!iso) return "–";
  const hasZone = /[zZ]|[+-]\d\d:?\d\d$/.test(iso);
  const date = new Date(hasZone ? iso : `${iso}Z`);
  if (Number.isNaN(date.getTime())) return String(iso);
  const today = date.toDateString() === new Date().toDateString();
  const shown = today ? date.toLocaleTimeString("en-GB") : date.toLocaleString("en-GB", {
    year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
  });
  const seconds = Math.round((Date.now() - date.getTime()) / 1000);
  return h("time", { datetime: iso, title: iso }, shown, " ", h("small", { class: "rel" }, `(${relative(seconds)})`));
}

/** Pretty JSON in a collapsible block, for the raw answer one click away. */
export function rawJson(value, label = "Raw JSON") {
  return h("details", { class: "raw" },
    h("summary", {}, label),
    h("pre", {}, h("code", {}, JSON.stringify(value, null, 2))));
}

/** A "show more" pager over a long list: renders `pageSize` at a time into `list`. */
export function pager(items, pageSize, render, list, noun) {
  let shown = 0;
  const more = h("button", { type: "button", class: "more" });
  const status = h("p", { class: "muted", "aria-live": "polite" });
  function next() {
    const batch = items.slice(shown, shown + pageSize);
    batch.forEach((item, i) => list.append(render(item, shown + i)));
    shown += batch.length;
    status.textContent = `Showing ${shown} of ${items.length} ${noun}.`;
    more.hidden = shown >= items.length;
    more.textContent = `Show ${Math.min(pageSize, items.length - shown)} more`;
  }
  more.addEventListener("click", next);
  next();
  return h("div", { class: "pager" }, status, more);
}
