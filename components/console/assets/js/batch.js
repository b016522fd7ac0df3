// Scoring a small library in the browser: a file or pasted text through one model, sent in
// batches (as `runtime-host predict` does for large ones), with progress, a sortable table of
// the first rows, a histogram of the predictions with the in-domain share, and the results
// as a CSV download.

import { call, consoleConfig, modelPath } from "./api.js";
import { structure } from "./structure.js";
import { h, replace, errorBox, num } from "./dom.js";

/** Rows per request at most (the model's own limit, from its document, may be lower). */
const BATCH = 100;
/** Requests in flight at once. */
const IN_FLIGHT = 2;
/** Rows shown in the table (every row is in the download). */
const SHOWN = 100;
/** Rows one run takes at most: larger libraries belong to `runtime-host predict`. */
const MAX_ROWS = 20000;
const BINS = 20;

/** Splits one CSV/TSV line, honouring double quotes. */
function cells(line, sep) {
  const out = [];
  let cur = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') { cur += '"'; i++; } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === sep) { out.push(cur); cur = ""; } else cur += c;
  }
  out.push(cur);
  return out.map((s) => s.trim());
}

/** The rows of a library: `{ id, input }`, input a SMILES string (text models) or a
 *  feature object (tabular ones). A first line naming columns makes it CSV/TSV; otherwise
 *  each line is a SMILES with an optional name, as in a .smi file. */
export function parseLibrary(text, tabular, wholeLines = false) {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "" && !l.startsWith("#"));
  if (!lines.length) throw new Error("the library is empty");
  const sep = lines[0].includes("\t") ? "\t" : lines[0].includes(",") ? "," : null;
  const head = sep ? cells(lines[0], sep).map((c) => c.toLowerCase()) : [];
  const smilesCol = head.findIndex((c) => ["smiles", "canonical_smiles", "text"].includes(c));
  const idCol = head.findIndex((c) => ["id", "name", "compound_id", "title"].includes(c));
  if (tabular) {
    if (!sep) throw new Error("a tabular model needs a CSV or TSV with a header row of feature names");
    const names = cells(lines[0], sep);
    return lines.slice(1).map((line, i) => {
      const values = cells(line, sep);
      const features = {};
      names.forEach((n, k) => {
        if (k === idCol) return;
        const v = values[k] ?? "";
        features[n] = v !== "" && Number.isFinite(Number(v)) ? Number(v) : v;
      });
      return { id: idCol >= 0 ? values[idCol] : String(i + 1), input: features };
    });
  }
  if (sep && smilesCol >= 0) {
    return lines.slice(1).map((line, i) => {
      const values = cells(line, sep);
      return { id: idCol >= 0 && values[idCol] ? values[idCol] : String(i + 1), input: values[smilesCol] ?? "" };
    });
  }
  // A text model reads whole lines (a sentence has spaces); SMILES lines may name the row.
  if (wholeLines) return lines.map((line, i) => ({ id: String(i + 1), input: line.trim() }));
  return lines.map((line, i) => {
    const [smiles, ...name] = line.trim().split(/\s+/);
    return { id: name.length ? name.join(" ") : String(i + 1), input: smiles };
  });
}

/** A result's value to plot and sort by: the prediction when it is a number. */
const valueOf = (r) => (typeof r.results?.prediction === "number" ? r.results.prediction : null);
const inDomain = (r) => r.results?.in_domain ?? r.results?.in_reliable_range ?? null;
const shownPrediction = (r) => {
  const p = r.results?.prediction;
  if (p === undefined || p === null) return "";
  return typeof p === "number" ? num(p, 4) : typeof p === "object" ? JSON.stringify(p) : String(p);
};

/** The most items the model's document allows per batch (1: it takes no batches). */
function maxItems(doc, field) {
  let found = null;
  const walk = (v) => {
    if (found !== null || v === null || typeof v !== "object") return;
    const max = v.properties?.[field]?.maxItems;
    if (typeof max === "number") found = max;
    else Object.values(v).forEach(walk);
  };
  walk(doc);
  return found ?? 1;
}

async function scoreAll(name, rows, shared, tabular, onBatch, stopped) {
  const base = modelPath(name);
  const doc = await call(`${base}/openapi.json`).catch(() => null);
  const many = tabular ? "rows" : "texts";
  const size = Math.max(1, Math.min(BATCH, maxItems(doc, many)));
  const results = new Array(rows.length);
  let next = 0;
  const worker = async () => {
    while (next < rows.length && !stopped()) {
      const start = next;
      const batch = rows.slice(start, start + size);
      next += batch.length;
      const data = { ...shared };
      let answers;
      if (size > 1) {
        data[many] = batch.map((r) => r.input);
        const response = await call(`${base}/predict`, { method: "POST", body: { input_type: tabular ? "tabular" : "text", data } });
        answers = response.results.items;
      } else {
        data[tabular ? "features" : "text"] = batch[0].input;
        answers = [await call(`${base}/predict`, { method: "POST", body: { input_type: tabular ? "tabular" : "text", data } })
          .catch((e) => ({ success: false, error_message: e.message }))];
      }
      batch.forEach((row, k) => {
        const a = answers[k] ?? {};
        results[start + k] = { ...row, success: a.success === true, results: a.success ? a.results : null, error: a.success ? "" : a.error_message ?? "no answer" };
      });
      onBatch(results);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return results.filter(Boolean);
}

/** An SVG histogram of the numeric predictions, each bar split into in-domain and outside. */
function histogram(results) {
  const values = results.filter((r) => valueOf(r) !== null);
  if (!values.length) return h("p", {}, "No numeric predictions to plot.");
  const xs = values.map(valueOf);
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  const width = (hi - lo) / BINS || 1;
  const bins = Array.from({ length: BINS }, () => ({ inside: 0, outside: 0 }));
  for (const r of values) {
    const b = Math.min(BINS - 1, Math.floor((valueOf(r) - lo) / width));
    if (inDomain(r) === false) bins[b].outside++; else bins[b].inside++;
  }
  const tallest = Math.max(...bins.map((b) => b.inside + b.outside));
  const ns = "http://www.w3.org/2000/svg";
  const el = (tag, attrs) => {
    const e = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    return e;
  };
  const [W, H, barW] = [600, 160, 600 / BINS];
  const svg = el("svg", { viewBox: `0 0 ${W} ${H + 20}`, class: "histogram", role: "img",
    "aria-label": `Histogram of ${values.length} predictions from ${num(lo, 3)} to ${num(hi, 3)}` });
  bins.forEach((b, i) => {
    const hIn = (b.inside / tallest) * H;
    const hOut = (b.outside / tallest) * H;
    const title = el("title", {});
    title.textContent = `${num(lo + i * width, 3)} to ${num(lo + (i + 1) * width, 3)}: ${b.inside} in domain, ${b.outside} outside`;
    const g = el("g", {});
    g.append(title);
    if (b.inside) g.append(el("rect", { x: i * barW + 1, y: H - hIn, width: barW - 2, height: hIn, class: "bar-in" }));
    if (b.outside) g.append(el("rect", { x: i * barW + 1, y: H - hIn - hOut, width: barW - 2, height: hOut, class: "bar-out" }));
    svg.append(g);
  });
  for (const [x, label, anchor] of [[0, num(lo, 3), "start"], [W, num(hi, 3), "end"]]) {
    const t = el("text", { x, y: H + 16, "text-anchor": anchor, class: "axis" });
    t.textContent = label;
    svg.append(t);
  }
  return svg;
}

function csvOf(results) {
  const quote = (v) => (/[",\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
  const lines = ["id,input,prediction,in_domain,error"];
  for (const r of results) {
    const input = typeof r.input === "string" ? r.input : JSON.stringify(r.input);
    const d = inDomain(r);
    lines.push([r.id, input, shownPrediction(r), d === null ? "" : String(d), r.error].map((v) => quote(String(v))).join(","));
  }
  return `${lines.join("\n")}\n`;
}

/** The table of the first rows, sorted by a column when its header is pressed; `molecules`:
 *  the inputs are SMILES, drawn under each. */
function resultsTable(results, molecules, sort = { key: null, up: true }) {
  const columns = [["id", (r) => r.id], ["input", (r) => (typeof r.input === "string" ? r.input : JSON.stringify(r.input))],
    ["prediction", (r) => valueOf(r) ?? shownPrediction(r)], ["in domain", (r) => String(inDomain(r) ?? "")], ["error", (r) => r.error]];
  const wrap = h("div", { class: "scroll", id: "batch-table" });
  const draw = () => {
    let rows = [...results];
    if (sort.key !== null) {
      const get = columns[sort.key][1];
      rows.sort((a, b) => {
        const [x, y] = [get(a), get(b)];
        // Rows without a value (failed ones) stay last either way.
        if ((x === "") !== (y === "")) return x === "" ? 1 : -1;
        const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
        return sort.up ? c : -c;
      });
    }
    const head = columns.map(([label], i) => h("th", { scope: "col", "aria-sort": sort.key === i ? (sort.up ? "ascending" : "descending") : "none" },
      h("button", { type: "button", class: "sort", "data-column": label, onclick: () => {
        sort = { key: i, up: sort.key === i ? !sort.up : true };
        draw();
      } }, label)));
    const body = rows.slice(0, SHOWN).map((r) => h("tr", { class: r.error ? "failed" : "" },
      h("th", { scope: "row" }, r.id),
      h("td", { class: "mono" }, columns[1][1](r),
        molecules && typeof r.input === "string" && !r.error ? h("br") : null,
        molecules && typeof r.input === "string" && !r.error ? structure(r.input, "small") : null),
      h("td", { class: "num" }, shownPrediction(r)),
      h("td", {}, String(inDomain(r) ?? "")), h("td", {}, r.error)));
    replace(wrap, h("table", {}, h("caption", {}, `First ${Math.min(SHOWN, rows.length)} of ${rows.length} rows`),
      h("thead", {}, h("tr", {}, head)), h("tbody", {}, body)));
  };
  draw();
  return wrap;
}

export async function batchPage() {
  const { models } = await consoleConfig();
  const status = h("p", { id: "batch-status", role: "status" });
  const bar = h("progress", { id: "batch-progress", max: 1, value: 0 });
  const out = h("div", { id: "batch-results" });
  const file = h("input", { id: "batch-file", type: "file", accept: ".smi,.smiles,.csv,.tsv,.txt" });
  const paste = h("textarea", { id: "batch-text", rows: 8 });
  const model = h("select", { id: "batch-model" }, models.map((m) => h("option", { value: m }, m)));
  // What each model reads, so the box asks for the right thing: SMILES, texts or rows.
  const reads = Object.fromEntries(await Promise.all(models.map(async (m) => {
    try {
      const [caps, examples] = await Promise.all([
        call(`${modelPath(m)}/capabilities`), call(`${modelPath(m)}/test_examples`)]);
      const types = caps.capabilities.flatMap((c) => c.input_types);
      const text = examples.usage_instructions?.body_format?.data?.text;
      const kind = types.includes("text") ? (text === "<SMILES>" ? "smiles" : "text")
        : types.includes("tabular") ? "tabular" : "other";
      return [m, kind];
    } catch {
      return [m, "other"];
    }
  })));
  const PLACEHOLDERS = {
    smiles: "SMILES [name], one per line, or CSV/TSV with a smiles column",
    text: "one text per line, or CSV/TSV with a text column",
    tabular: "CSV or TSV with a header row naming the model's features, a row per input",
    other: "one input per line",
  };
  // A molecule model first (the page is mostly for libraries of molecules).
  model.value = models.find((m) => reads[m] === "smiles") ?? models.find((m) => reads[m] === "text") ?? models[0] ?? "";
  const extra = h("input", { id: "batch-data", type: "text", placeholder: "e.g. property=logp" });
  let stop = false;
  const stopButton = h("button", { type: "button", id: "batch-stop", disabled: true, onclick: () => { stop = true; } }, "Stop");
  const askFor = () => { paste.placeholder = PLACEHOLDERS[reads[model.value]] ?? PLACEHOLDERS.other; };
  askFor();
  model.addEventListener("change", askFor);
  file.addEventListener("change", async () => {
    if (file.files[0]) paste.value = await file.files[0].text();
  });
  const run = async (event) => {
    event.preventDefault();
    stop = false;
    replace(out);
    try {
      const name = model.value;
      const caps = await call(`${modelPath(name)}/capabilities`);
      const types = caps.capabilities.flatMap((c) => c.input_types);
      const tabular = !types.includes("text") && types.includes("tabular");
      const rows = parseLibrary(paste.value, tabular, reads[name] === "text");
      if (rows.length > MAX_ROWS) throw new Error(`${rows.length} rows: the console takes ${MAX_ROWS} at most; use runtime-host predict for larger libraries`);
      const shared = {};
      for (const pair of extra.value.split(/[\s;]+/).filter(Boolean)) {
        const [k, ...v] = pair.split("=");
        shared[k] = v.join("=");
      }
      bar.max = rows.length;
      stopButton.disabled = false;
      const started = performance.now();
      const results = await scoreAll(name, rows, shared, tabular, (partial) => {
        const done = partial.filter(Boolean).length;
        bar.value = done;
        const rate = done / ((performance.now() - started) / 1000);
        status.textContent = `${done} of ${rows.length} rows, ${Math.round(rate)} rows/s`;
      }, () => stop);
      stopButton.disabled = true;
      const failed = results.filter((r) => r.error).length;
      const known = results.filter((r) => inDomain(r) !== null);
      const inside = known.filter((r) => inDomain(r) === true).length;
      const share = known.length ? `${Math.round((100 * inside) / known.length)}% in domain (${inside} of ${known.length})` : "no applicability domain reported";
      status.textContent = `${stop ? "Stopped" : "Done"}: ${results.length} of ${rows.length} rows through ${name}, ${failed} failed; ${share}.`;
      const href = `data:text/csv;charset=utf-8,${encodeURIComponent(csvOf(results))}`;
      replace(out,
        h("h2", {}, "Predictions"),
        h("p", { id: "batch-share" }, share),
        histogram(results),
        h("p", { class: "muted" }, "Bars: predictions in the applicability domain in blue, outside it in orange."),
        h("p", {}, h("a", { id: "batch-download", href, download: `${name}-predictions.csv` }, "Download the results (CSV)")),
        resultsTable(results, reads[name] === "smiles"));
    } catch (e) {
      stopButton.disabled = true;
      status.textContent = "";
      replace(out, errorBox(e, "Could not score the library"));
    }
  };
  return h("section", {},
    h("h1", {}, "Batch"),
    h("p", {}, `Score a library (up to ${MAX_ROWS} rows; for more, `, h("code", {}, "runtime-host predict"), "). Rows the model cannot read fail alone."),
    h("form", { id: "batch-form", onsubmit: run },
      h("div", { class: "field" }, h("label", { for: "batch-model" }, "Model"), model),
      h("div", { class: "field" }, h("label", { for: "batch-file" }, "File"), file),
      h("div", { class: "field" }, h("label", { for: "batch-text" }, "Or paste"), paste),
      h("div", { class: "field" }, h("label", { for: "batch-data" }, "Shared fields (name=value)"), extra),
      h("p", {}, h("button", { type: "submit" }, "Score"), " ", stopButton)),
    bar, status, out);
}
