// A prediction answer, readably: each predicted property with its unit and the model's
// reliable range, the in-range and applicability flags as badges, any warning as a callout,
// and the raw JSON one click away.

import { h, table, badge, num, rawJson, errorBox } from "./dom.js";
import { structure } from "./structure.js";

/** Fields shown in their own way; everything else goes in the "Other fields" table. */
const SHOWN = new Set(["prediction", "property_type", "unit", "units", "in_reliable_range",
  "in_domain", "warning", "warnings", "probabilities", "embedding", "embeddings", "input"]);

function rangeOf(ranges, code) {
  return ranges && ranges.property_ranges ? ranges.property_ranges[code] : undefined;
}

function value(v) {
  if (typeof v === "number") return num(v, 4);
  if (typeof v === "string") return v;
  return JSON.stringify(v);
}

/** A field's value as the page shows fields: numbers rounded, an object as its named
 *  values (nested as deep as it goes), a list as its items, an empty list as "none". */
function field(v) {
  if (Array.isArray(v)) {
    if (!v.length) return "none";
    if (v.every((x) => x === null || typeof x !== "object")) return v.map(value).join(", ");
    return h("ul", { class: "field-list" }, v.map((x) => h("li", {}, field(x))));
  }
  if (v !== null && typeof v === "object") {
    return h("dl", { class: "field-facts" },
      Object.entries(v).map(([k, x]) => [h("dt", {}, k.replaceAll("_", " ")), h("dd", {}, field(x))]));
  }
  return value(v);
}

/** One row per predicted property: value, unit, reliable range and whether it is inside. */
function predictionTable(results, ranges) {
  const p = results.prediction;
  const entries = p !== null && typeof p === "object" && !Array.isArray(p)
    ? Object.entries(p)
    : [[results.property_type ?? "prediction", p]];
  const rows = entries.map(([code, v]) => {
    const range = rangeOf(ranges, code);
    const unit = (results.units && results.units[code]) ?? (entries.length === 1 ? results.unit : undefined)
      ?? (range ? range.unit : "");
    let outside = false;
    if (range && typeof v === "number") {
      outside = v < range.reliable_range.min || v > range.reliable_range.max;
    }
    return [
      range ? h("span", {}, range.property_name, h("br"), h("code", { class: "muted" }, code)) : code,
      h("span", {}, h("span", { class: "value" }, value(v)), outside ? [" ", badge("warn", "outside reliable range")] : null),
      unit || "",
      range ? `${num(range.reliable_range.min, 3)} … ${num(range.reliable_range.max, 3)}` : "–",
    ];
  });
  return table("Prediction", ["Property", "Value", "Unit", "Reliable range"], rows,
    { class: "prediction" });
}

function flags(results) {
  const out = [];
  if (typeof results.in_reliable_range === "boolean") {
    out.push(results.in_reliable_range ? badge("ok", "in reliable range")
      : badge("warn", "outside reliable range"));
  }
  if (typeof results.in_domain === "boolean") {
    out.push(results.in_domain ? badge("ok", "in applicability domain")
      : badge("warn", "outside applicability domain"));
  }
  return out.length ? h("p", { class: "flags" }, out) : null;
}

function warnings(results) {
  const list = [results.warning, ...(Array.isArray(results.warnings) ? results.warnings : [])]
    .filter((w) => typeof w === "string" && w);
  return list.map((w) => h("div", { class: "warning", role: "note" }, h("strong", {}, "Warning: "), w));
}

function vectorSummary(name, vector) {
  const head = vector.slice(0, 8).map((x) => num(x, 4)).join(", ");
  return h("p", {}, h("strong", {}, `${name}: `), `${vector.length} numbers: ${head}${vector.length > 8 ? ", …" : ""}`);
}

/** `object`'s entries with the names of `order` first, in that order (a tabular model's
 *  features as its manifest lists them; its JSON comes with the keys sorted). */
function inOrder(object, order) {
  const first = order.filter((k) => k in object).map((k) => [k, object[k]]);
  const rest = Object.entries(object).filter(([k]) => !order.includes(k));
  return Object.fromEntries([...first, ...rest]);
}

/** The whole answer of POST /predict; `smiles`, when the request had one, is drawn; `order`
 *  names a tabular model's features in its own order, for the input echoed. */
export function renderPrediction(response, ranges, smiles, order = []) {
  const parts = [];
  // Drawn only when the model read it: a refused SMILES has its message instead.
  if (response.success && typeof smiles === "string" && smiles.trim()) {
    parts.push(structure(smiles.trim(), "large"));
  }
  if (!response.success) {
    parts.push(errorBox({ message: response.error_message || "the model reported failure" },
      "The model could not predict"));
  } else {
    const r = response.results;
    if (r && typeof r === "object" && !Array.isArray(r)) {
      // A SMILES as sent; a picture's or sound's facts (format, size, duration) by name.
      if (r.input !== null && typeof r.input === "object" && !Array.isArray(r.input)) {
        parts.push(h("div", { class: "input" }, h("strong", {}, "Input"), field(inOrder(r.input, order))));
      } else if ("input" in r) {
        parts.push(h("p", { class: "input" }, h("strong", {}, "Input: "), h("code", {}, value(r.input))));
      }
      parts.push(flags(r), warnings(r));
      if ("prediction" in r) parts.push(predictionTable(r, ranges));
      if (r.probabilities && typeof r.probabilities === "object") {
        parts.push(table("Probabilities", ["Class", "Probability"],
          Object.entries(r.probabilities).map(([k, v]) => [k, num(v, 4)])));
      }
      if (Array.isArray(r.embedding)) parts.push(vectorSummary("Embedding", r.embedding));
      if (Array.isArray(r.embeddings)) {
        parts.push(r.embeddings.map((e, i) => vectorSummary(`Embedding ${i + 1}`, e)));
      }
      const other = Object.entries(r).filter(([k]) => !SHOWN.has(k));
      if (other.length) parts.push(table("Other fields", ["Field", "Value"], other.map(([k, v]) => [k, field(v)])));
    } else if (Array.isArray(r)) {
      parts.push(vectorSummary("Result", r));
    } else {
      parts.push(h("p", {}, value(r)));
    }
  }
  parts.push(h("p", { class: "muted" }, `${response.model_name}, computed in ${num(response.computation_time_ms, 3)} ms.`));
  parts.push(rawJson(response));
  return h("div", { class: "result", id: "result" }, parts);
}
