// The models pages: every registration in the registry, refreshed live, and for each model
// this app serves under /models/<name>/ its health, metrics, description and ranges.

import { call, callAll, consoleConfig, modelPath } from "./api.js";
import { h, replace, table, facts, errorBox, badge, num, when } from "./dom.js";
import { deploymentsSection } from "./deployments.js";
import { qualitySection } from "./quality.js";
import { trafficSection } from "./traffic.js";

/** How often live tables refresh. */
const REFRESH_MS = 3000;

/** Runs `refresh` now and every REFRESH_MS until the page changes. */
function live(refresh, onCleanup) {
  const timer = setInterval(refresh, REFRESH_MS);
  onCleanup(() => clearInterval(timer));
  return refresh();
}

/** The model this app serves that a registration belongs to: `up` registers each model as
 *  `runtime-host/<name>`; other hosts may simply use the model's name. */
function servedName(registration, served) {
  const tail = registration.app_name.split("/").pop();
  if (served.includes(tail)) return tail;
  return served.includes(registration.model_name) ? registration.model_name : null;
}

function aliveCell(alive) {
  if (alive === true) return badge("ok", "alive");
  if (alive === false) return badge("bad", "not running");
  // null: the registry has not looked at the process yet, or cannot (under Spin).
  return h("span", { title: "the registry has not checked this process (yet)" }, badge("muted", "not checked"));
}

/** A registration a host made to keep a busy port from being handed out: the port is held
 *  by a program outside the registry (`runtime-host` names these `<app>/busy-port-guard`). */
function isPortGuard(registration) {
  return registration.app_name.endsWith("/busy-port-guard");
}

/** A registration's model version: `runtime-host` puts each deployment's own (a digest of its
 *  files, or its manifest's) in the metadata; `app_version` is the specification's. */
function modelVersion(registration) {
  const own = registration.metadata && registration.metadata.model_version;
  return typeof own === "string" && own ? own : registration.app_version;
}

function registrationsTable(listing, served) {
  const byPort = [...listing.registrations].sort((a, b) => a.port - b.port);
  const guards = byPort.filter(isPortGuard);
  const models = byPort.filter((r) => !isPortGuard(r));
  const rows = models.map((r) => {
    const name = servedName(r, served);
    return [
      r.app_name,
      name ? h("a", { href: `#/models/${encodeURIComponent(name)}` }, r.model_name) : r.model_name,
      modelVersion(r),
      String(r.port),
      String(r.process_id),
      aliveCell(r.process_alive),
      when(r.registered_at),
      when(r.last_heartbeat),
      when(r.expires_at),
    ];
  });
  const held = guards.length
    ? h("p", { class: "muted", id: "busy-ports" },
      `Held by other programs, so not handed out: port${guards.length === 1 ? "" : "s"} `,
      guards.map((g) => g.port).join(", "), ".")
    : "";
  if (!rows.length) return h("div", {}, h("p", { class: "muted" }, "No model is registered."), held);
  return h("div", {},
    table(`${rows.length} registration${rows.length === 1 ? "" : "s"}`,
      ["Name", "Model", "Version", "Port", "Process", "Alive", "Registered", "Last heartbeat", "Expires"],
      rows, { class: "registrations stack" }),
    held);
}

/** The health and metrics of one served model, as a card. */
async function modelCard(name) {
  const base = modelPath(name);
  const [health, metrics] = await callAll([`${base}/health`, `${base}/metrics`]);
  const status = health.ok
    ? badge("ok", health.value.status)
    : badge("bad", health.error.status === 503 ? "not ready" : "unreachable");
  const m = metrics.ok ? metrics.value : null;
  return h("li", { class: "card" },
    h("h3", {}, h("a", { href: `#/models/${encodeURIComponent(name)}` }, name), " ", status),
    health.ok ? h("p", { class: "muted" }, `${health.value.model} ${health.value.version}`,
      health.value.model_version ? ` · version ${health.value.model_version}` : "")
      : errorBox(health.error, "Health"),
    m ? h("dl", { class: "stats" },
      h("dt", {}, "Requests"), h("dd", {}, num(m.requests_served)),
      h("dt", {}, "Average latency"), h("dd", {}, `${num(m.avg_latency_ms, 3)} ms`),
      h("dt", {}, "Uptime"), h("dd", {}, duration(m.uptime_s)),
      h("dt", {}, "Last error"), h("dd", {}, m.last_error ?? "none"))
      : errorBox(metrics.error, "Metrics"),
    h("p", {}, h("a", { class: "button", href: `#/try/${encodeURIComponent(name)}` }, `Try ${name}`)));
}

function duration(seconds) {
  if (typeof seconds !== "number") return String(seconds);
  if (seconds < 120) return `${num(seconds, 0)} s`;
  if (seconds < 7200) return `${num(seconds / 60, 0)} min`;
  return `${num(seconds / 3600, 1)} h`;
}

export async function modelsPage(onCleanup) {
  const { models: served } = await consoleConfig();
  const registrations = h("div", { id: "registrations" });
  const updated = h("p", { class: "muted" });
  const cards = h("ul", { class: "cards", id: "served-models" });
  const page = h("section", {},
    h("h1", {}, "Models"),
    h("h2", {}, "Registrations"),
    h("p", {}, "Every deployment registered with the port registry, refreshed every ",
      REFRESH_MS / 1000, " s."),
    updated, registrations,
    h("h2", {}, "Models in this app"),
    served.length ? cards
      : h("p", { class: "muted" }, "This app serves no models under /models/ (the console's ",
        h("code", {}, "models"), " variable is empty)."),
    deploymentsSection(onCleanup));
  await live(async () => {
    try {
      const listing = await call("/registry");
      replace(registrations, registrationsTable(listing, served));
      updated.textContent = `Updated ${new Date().toLocaleTimeString("en-GB")}.`;
    } catch (e) {
      replace(registrations, errorBox(e, "The registry"));
    }
    const fresh = await Promise.all(served.map(modelCard));
    replace(cards, fresh);
  }, onCleanup);
  return page;
}

function capabilitiesTable(caps) {
  return table("Capabilities", ["Name", "Input types", "Outputs", "Description"],
    caps.capabilities.map((c) => [
      c.name,
      c.input_types.join(", "),
      Object.entries(c.output_schema).map(([k, t]) => `${k}: ${t}`).join(", "),
      c.description,
    ]));
}

function rangesSection(ranges) {
  const rows = Object.entries(ranges.property_ranges).map(([code, p]) => [
    code,
    p.property_name,
    p.unit,
    `${num(p.training_range.min, 3)} … ${num(p.training_range.max, 3)} (mean ${num(p.training_range.mean, 3)})`,
    `${num(p.reliable_range.min, 3)} … ${num(p.reliable_range.max, 3)}`,
    num(p.training_samples),
    Object.entries(p.validation_metrics).map(([k, v]) => `${k} ${v}`).join("; "),
    p.reliable_range.note,
  ]);
  const list = (items) => h("ul", {}, items.map((i) => h("li", {}, i)));
  return h("div", {},
    h("p", {}, ranges.description),
    table("Acceptable ranges", ["Property", "Name", "Unit", "Training range", "Reliable range",
      "Samples", "Validation", "Note"], rows, { class: "ranges stack" }),
    h("h3", {}, "Supported"), list(ranges.chemical_scope.supported_features),
    h("h3", {}, "Limitations"), list(ranges.chemical_scope.limitations),
    h("h3", {}, "Recommendations"), list(ranges.usage_recommendations));
}

function link(url) {
  return /^https?:\/\//.test(url) ? h("a", { href: url, rel: "noopener noreferrer" }, url) : url;
}

/** One part of the model page: its content, or the error the service gave for it. */
function part(title, result, render) {
  return h("section", { class: "part" }, h("h2", {}, title),
    result.ok ? render(result.value) : errorBox(result.error, title));
}

export async function modelPage(name, onCleanup) {
  const base = modelPath(name);
  const [health, metrics, info, citation, caps, ranges, evidence] = await callAll(
    ["health", "metrics", "info", "citation", "capabilities", "acceptable_ranges", "evidence"]
      .map((p) => `${base}/${p}`));
  const status = h("div", { id: "model-status", class: "columns" });
  const showStatus = (hl, mt) => replace(status,
    part("Health", hl, (v) => facts([["Status", badge("ok", v.status)],
      ["Model", v.model], ["Version", v.version]])),
    part("Metrics", mt, (m) => facts([
      ["Requests served", num(m.requests_served)],
      ["Average latency", `${num(m.avg_latency_ms, 3)} ms`],
      ["Last error", m.last_error ?? "none"],
      ["Uptime", duration(m.uptime_s)]])));
  showStatus(health, metrics);
  const timer = setInterval(async () => {
    const [hl, mt] = await callAll([`${base}/health`, `${base}/metrics`]);
    showStatus(hl, mt);
  }, REFRESH_MS);
  onCleanup(() => clearInterval(timer));
  return h("article", {},
    h("h1", {}, name),
    h("p", {},
      h("a", { class: "button", href: `#/try/${encodeURIComponent(name)}` }, `Try ${name}`), " ",
      h("a", { href: `${base}/openapi.json` }, "OpenAPI document")),
    status,
    // A model without evidence (404) shows no plots rather than an empty frame.
    evidence.ok ? qualitySection(evidence.value) : null,
    trafficSection(name, base, onCleanup),
    part("Information", info, (i) => facts([["Name", i.name],
      ["Description", i.description], ["License", i.license], ["Citation", link(i.citation)],
      ["Maintainer", i.maintainer]])),
    part("Capabilities", caps, (c) => h("div", {}, capabilitiesTable(c),
      c.elements ? h("p", {}, `Elements: ${c.elements.join(", ")}`) : null)),
    part("Acceptable ranges", ranges, rangesSection),
    part("Citation", citation, (c) => h("div", {},
      h("h3", {}, "Paper"), h("pre", { class: "wrap" }, c.paper_citation),
      h("h3", {}, "Software (BibTeX)"), h("pre", {}, c.software_bibtex))));
}
