// Trying a model: its test examples as buttons, a form built from the request format its
// /test_examples describes (for an image or audio model: a file, dropped or picked, or a URL,
// media.js), and the answer shown readably (results.js).

import { call, callAll, consoleConfig, modelPath } from "./api.js";
import { h, replace, errorBox } from "./dom.js";
import { renderPrediction } from "./results.js";
import { structure, smilesPreview } from "./structure.js";
import { mediaKind, mediaForm, mediaRequest, mediaView, exampleInput, exampleThumbnail } from "./media.js";

/** Example fields that describe the example rather than being model input. */
const EXAMPLE_META = ["name", "description", "category", "expected", "expected_output"];
/** Names under which models commonly take their input. */
const INPUT_FIELDS = ["text", "smiles", "input", "image", "image_url", "audio", "audio_url", "table"];

const isPlaceholder = (v) => typeof v === "string" && v.startsWith("<") && v.endsWith(">");

/** The /predict body an example stands for: the request format with its `<placeholder>`
 *  values removed and the example's input in the matching placeholder's place (the same
 *  rule `runtime-host check` uses). */
export function requestFor(format, example, inputTypes) {
  const data = {};
  const placeholders = [];
  for (const [k, v] of Object.entries(format.data ?? {})) {
    if (isPlaceholder(v)) placeholders.push(k);
    else data[k] = v;
  }
  const inputs = Object.entries(example).filter(([k]) => !EXAMPLE_META.includes(k));
  const slot = placeholders.find((p) => inputs.some(([k]) => k === p))
    ?? placeholders.find((p) => INPUT_FIELDS.includes(p)) ?? placeholders[0];
  if (slot !== undefined && inputs.length) data[slot] = inputs[0][1];
  else for (const [k, v] of inputs) data[k] = v;
  const inputType = typeof format.input_type === "string" && !isPlaceholder(format.input_type)
    ? format.input_type : inputTypes[0] ?? "text";
  return { input_type: inputType, data };
}

/** The key of `data` that holds a SMILES: where the examples' `smiles` go in their requests
 *  (molprop takes it in `text`), or `smiles` itself. */
function smilesSlot(format, examples, inputTypes) {
  const ex = examples.find((e) => typeof e.smiles === "string");
  if (!ex) return "smiles" in (format.data ?? {}) ? "smiles" : null;
  const request = requestFor(format, ex, inputTypes);
  return Object.keys(request.data).find((k) => request.data[k] === ex.smiles) ?? null;
}

/** A form field for one key of the request's `data`, shaped by its value in the format. */
function field(key, sample) {
  const id = `field-${key}`;
  const structured = sample !== null && typeof sample === "object";
  const text = structured ? JSON.stringify(sample, null, 2) : isPlaceholder(sample) ? "" : String(sample ?? "");
  const attrs = { id, name: key, "data-kind": structured ? "json" : typeof sample };
  const input = structured || key === "text" || key === "texts"
    ? h("textarea", { ...attrs, rows: structured ? 6 : 3 }, text)
    : h("input", { ...attrs, type: typeof sample === "number" ? "number" : "text", step: "any", value: text });
  if (isPlaceholder(sample)) input.setAttribute("placeholder", sample.slice(1, -1));
  return h("div", { class: "field" },
    h("label", { for: id }, key, structured ? " (JSON)" : ""), input);
}

/** A tabular model's features in its own order (model.toml's): the `required` list of the
 *  `features` object in its /openapi.json, else the request format's keys (a JSON object's
 *  keys come back sorted). */
export function featureOrder(document, format) {
  const given = format.data && format.data.features;
  const names = given && typeof given === "object" && !Array.isArray(given) ? Object.keys(given) : [];
  const seen = [];
  const look = (v) => {
    if (!v || typeof v !== "object") return;
    if (v.type === "object" && Array.isArray(v.required) && v.properties
      && v.required.length === names.length && v.required.every((n) => names.includes(n))) {
      seen.push(v.required);
      return;
    }
    Object.values(v).forEach(look);
  };
  look(document);
  return names.length ? (seen[0] ?? names) : [];
}

/** The acceptable range of feature `name` as a hint: its reliable range, else its training
 *  range, with its unit. */
function rangeHint(ranges, name) {
  const r = ranges && ranges.property_ranges && ranges.property_ranges[name];
  if (!r) return "";
  const range = r.reliable_range ?? r.training_range;
  if (!range || typeof range.min !== "number" || typeof range.max !== "number") return "";
  const unit = r.unit ? ` ${r.unit}` : "";
  const which = r.reliable_range ? "reliable range" : "training range";
  return `${range.min} to ${range.max}${unit} (${which})`;
}

/** One field per feature of a tabular model, in `order`: a number (empty: not measured,
 *  sent as null), or a category's text with the values seen in training offered. */
function featureFields(order, sample, ranges) {
  return h("fieldset", { class: "features" },
    h("legend", {}, "features"),
    order.map((name) => {
      const id = `feature-${name}`;
      const said = sample[name];
      const category = typeof said === "string" && said.startsWith("<one of: ")
        ? said.slice(9, -1).split(", ") : null;
      const hint = category ? `one of: ${category.join(", ")}` : rangeHint(ranges, name);
      const hintId = `${id}-hint`;
      const input = h("input", {
        id, name, "data-kind": "feature", "data-category": category ? "yes" : null,
        type: category ? "text" : "number", step: "any", inputmode: category ? null : "decimal",
        list: category ? `${id}-values` : null, "aria-describedby": hint ? hintId : null,
      });
      return h("div", { class: "field" },
        h("label", { for: id }, name), input,
        category ? h("datalist", { id: `${id}-values` }, category.map((c) => h("option", { value: c }))) : null,
        hint ? h("span", { id: hintId, class: "muted hint" }, hint) : null);
    }));
}

/** The request the form stands for; throws with a message naming a field that is not valid. */
function requestFromForm(form) {
  const data = {};
  for (const el of form.querySelectorAll("[data-kind]")) {
    const raw = el.value.trim();
    if (el.dataset.kind === "feature") {
      data.features = data.features ?? {};
      if (raw === "") data.features[el.name] = null;
      else if (el.dataset.category) data.features[el.name] = raw;
      else if (Number.isFinite(Number(raw))) data.features[el.name] = Number(raw);
      else throw new Error(`${el.name} must be a number (or empty when not measured)`);
      continue;
    }
    if (raw === "") continue;
    if (el.dataset.kind === "json") {
      try {
        data[el.name] = JSON.parse(raw);
      } catch (e) {
        throw new Error(`${el.name} is not valid JSON: ${e.message}`);
      }
    } else if (el.dataset.kind === "number") {
      data[el.name] = Number(raw);
    } else {
      data[el.name] = raw;
    }
  }
  return { input_type: form.elements.input_type.value, data };
}

/** Shows `request` in the form, so an example can be changed and sent again. */
function fillForm(form, request) {
  form.elements.input_type.value = request.input_type;
  const features = request.data.features;
  const named = [...form.querySelectorAll('[data-kind="feature"]')].map((el) => el.name);
  for (const el of form.querySelectorAll("[data-kind]")) {
    if (el.dataset.kind === "feature") {
      // An example's features by name, or as an array in the model's order.
      const v = Array.isArray(features) ? features[named.indexOf(el.name)]
        : features && typeof features === "object" ? features[el.name] : undefined;
      el.value = v === undefined || v === null ? "" : String(v);
      continue;
    }
    const v = request.data[el.name];
    el.value = v === undefined ? "" : el.dataset.kind === "json" ? JSON.stringify(v, null, 2) : String(v);
  }
}

/** The form of a text or tabular model: one field per key of the request format's `data`
 *  (a tabular model's `features`: one field per feature, in `order`, with its range from
 *  `ranges` as a hint); submitted, the request it stands for goes to `send`, or why it is
 *  not valid to `refuse`. */
function requestForm(format, inputTypes, order, ranges, send, refuse) {
  const form = h("form", { id: "predict-form", novalidate: true },
    h("div", { class: "field" }, h("label", { for: "input_type" }, "input_type"),
      h("select", { id: "input_type", name: "input_type" },
        (inputTypes.length ? inputTypes : [format.input_type ?? "text"]).map((t) =>
          h("option", { value: t, selected: t === format.input_type }, t)))),
    // The input itself first, then the options (JSON objects carry no order of their own).
    Object.entries(format.data ?? {})
      .sort(([a], [b]) => Number(!INPUT_FIELDS.includes(a)) - Number(!INPUT_FIELDS.includes(b)))
      .map(([k, v]) => (k === "features" && order.length ? featureFields(order, v, ranges) : field(k, v))),
    h("button", { type: "submit" }, "Predict"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    let request;
    try {
      request = requestFromForm(form);
    } catch (e) {
      refuse(e);
      return;
    }
    send(request);
  });
  return form;
}

function pickModel(served, current) {
  const select = h("select", { id: "model-select" },
    h("option", { value: "" }, "Choose a model"),
    served.map((n) => h("option", { value: n, selected: n === current }, n)));
  select.addEventListener("change", () => {
    if (select.value) location.hash = `#/try/${encodeURIComponent(select.value)}`;
  });
  return h("div", { class: "field" }, h("label", { for: "model-select" }, "Model"), select);
}

export async function tryPage(name) {
  const { models: served } = await consoleConfig();
  if (!name) {
    return h("section", {}, h("h1", {}, "Try it"),
      served.length ? pickModel(served, "")
        : h("p", { class: "muted" }, "This app serves no models under /models/."));
  }
  const base = modelPath(name);
  const [examples, caps, ranges, openapi] = await callAll(
    ["test_examples", "capabilities", "acceptable_ranges", "openapi.json"].map((p) => `${base}/${p}`));
  if (!examples.ok) return h("section", {}, h("h1", {}, `Try ${name}`), errorBox(examples.error, "Test examples"));
  const inputTypes = caps.ok ? [...new Set(caps.value.capabilities.flatMap((c) => c.input_types))] : [];
  const format = examples.value.usage_instructions.body_format ?? {};
  const result = h("div", { id: "result-area", "aria-live": "polite" });
  const smilesField = smilesSlot(format, examples.value.examples, inputTypes);
  const order = featureOrder(openapi.ok ? openapi.value : null, format);
  const kind = mediaKind(inputTypes, format);

  /** Sends `request`; `media`, for an image or audio model, is what was sent, shown above
   *  the answer (or the error) so the two can be compared. */
  async function send(request, label, media) {
    const sent = media ? mediaView(kind, media) : null;
    replace(result, sent, h("p", { class: "loading", role: "status" }, `Running ${label}…`));
    try {
      const answer = await call(`${base}/predict`, { method: "POST", body: request });
      replace(result, h("h2", {}, `Result: ${label}`), sent,
        renderPrediction(answer, ranges.ok ? ranges.value : null,
          smilesField ? request.data[smilesField] : undefined, order));
    } catch (e) {
      replace(result, h("h2", {}, `Result: ${label}`), sent, errorBox(e, `${label} failed`));
    }
    result.scrollIntoView({ block: "nearest" });
  }

  const form = kind ? mediaForm(kind, (input) => send(mediaRequest(kind, format, input), input.label, input))
    : requestForm(format, inputTypes, order, ranges.ok ? ranges.value : null,
      (request) => send(request, "your request"),
      (e) => replace(result, errorBox(e, "The request")));
  // A SMILES field draws what it holds as it is typed, or says where it stops parsing.
  const smilesInput = smilesField ? form.querySelector(`[name="${smilesField}"]`) : null;
  const preview = smilesInput ? smilesPreview(smilesInput) : null;
  if (preview) smilesInput.closest(".field").append(preview);

  const buttons = examples.value.examples.map((ex, i) => {
    const media = kind ? exampleInput(kind, ex) : null;
    const request = media ? mediaRequest(kind, format, media) : requestFor(format, ex, inputTypes);
    return h("li", {}, h("button", {
      type: "button",
      class: "example",
      "aria-describedby": `example-${i}`,
      onclick: () => {
        if (media) {
          send(request, ex.name, media);
          return;
        }
        fillForm(form, request);
        if (preview) preview.update();
        send(request, ex.name);
      },
    }, ex.name), " ", h("span", { id: `example-${i}`, class: "muted" },
      `${ex.description}${ex.category ? ` (${ex.category})` : ""}`),
    typeof ex.smiles === "string" && ex.smiles ? structure(ex.smiles, "small") : null,
    exampleThumbnail(kind, media));
  });

  // Wide screens: the inputs on the left, the answer beside them; narrow ones: one column.
  return h("section", {},
    h("h1", {}, `Try ${name}`),
    h("div", { class: "columns try" },
      h("div", {},
        pickModel(served, name),
        h("h2", {}, "Test examples"),
        h("ul", { class: "examples" }, buttons),
        h("h2", {}, "Your own request"),
        h("p", { class: "muted" }, `POST ${base}${examples.value.usage_instructions.endpoint ?? "/predict"}`),
        form,
        examples.value.notes && examples.value.notes.length
          ? h("details", {}, h("summary", {}, "Notes"), h("ul", {}, examples.value.notes.map((n) => h("li", {}, n))))
          : null),
      h("div", { class: "answer" }, result)));
}
