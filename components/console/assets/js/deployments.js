// The Deployments section of the Models page: `runtime-host up`'s admin API (/admin/...) with
// its token: every deployment with its status and version, reload or undeploy one, deploy a
// model from a path on the server. A host without the API (Spin: the console's own 404
// answers /admin/...) does not get the section at all: it shows only once the API answers
// (401 without a token).

import { call } from "./api.js";
import { h, replace, table, errorBox, badge } from "./dom.js";

/** The admin token lives for this browser tab only, and only once someone enters it. */
const TOKEN_KEY = "console.upAdminToken";
const REFRESH_MS = 3000;
const STATUS_KIND = { serving: "ok", upgrading: "warn", starting: "warn", failed: "bad" };

/** The section; `onCleanup` stops its refreshing when the page changes. */
export function deploymentsSection(onCleanup) {
  const token = h("input", {
    id: "deploy-token", name: "token", type: "password", autocomplete: "off",
    value: sessionStorage.getItem(TOKEN_KEY) || "",
  });
  const status = h("div", { id: "deploy-status", role: "status" });
  const list = h("div", { id: "deployments" });
  const path = h("input", { id: "deploy-path", name: "path", placeholder: "/srv/models/model.wasm or a model directory" });
  const name = h("input", { id: "deploy-name", name: "name", placeholder: "name (optional)" });
  /** Undeploys wait for a second click, on the same row. */
  let armed = null;
  /** What the table shows now: it is rebuilt only when that changes, so a refresh never
   *  takes a button from under the pointer or the keyboard focus. */
  let shown = "";

  const admin = (where, options = {}) => call(`/admin/deployments${where}`, { ...options, token: token.value.trim() });

  async function refresh() {
    if (!token.value.trim()) {
      shown = "";
      replace(list, h("p", { class: "muted" }, "Enter the admin token to see and manage the deployments."));
      return;
    }
    try {
      const { deployments } = await admin("");
      sessionStorage.setItem(TOKEN_KEY, token.value.trim());
      const now = JSON.stringify([deployments, armed]);
      if (now !== shown) {
        shown = now;
        replace(list, deploymentsTable(deployments));
      }
    } catch (e) {
      shown = "";
      const why = e.status === 404 || e.status === 405
        ? { message: "this host has no admin API (runtime-host up has one)" }
        : e;
      replace(list, errorBox(why, "Deployments"));
    }
  }

  async function act(what, run) {
    replace(status, h("p", { class: "muted" }, `${what} ...`));
    try {
      const answer = await run();
      const d = answer && answer.deployment;
      replace(status, h("p", { class: "ok-text" },
        d ? `${what}: ${d.name} is ${d.status} on version ${d.version}.` : `${what}: ${answer.message}`));
    } catch (e) {
      replace(status, errorBox(e, what));
    }
    await refresh();
  }

  function deploymentsTable(deployments) {
    const rows = deployments.map((d) => [
      d.name,
      badge(STATUS_KIND[d.status] || "muted", d.status),
      h("code", {}, d.version || "-"),
      d.origin,
      h("span", { class: "source" }, d.source),
      d.refused ? h("span", { class: "bad-text refused" }, d.refused) : "",
      h("span", { class: "actions" },
        h("button", { type: "button", class: "reload", "data-name": d.name,
          onclick: () => act(`Reload ${d.name}`, () => admin(`/${encodeURIComponent(d.name)}/reload`, { method: "POST" })) },
        "Reload"),
        " ",
        h("button", { type: "button", class: armed === d.name ? "undeploy armed" : "undeploy", "data-name": d.name,
          onclick: () => {
            if (armed !== d.name) {
              armed = d.name;
              refresh();
              return;
            }
            armed = null;
            act(`Undeploy ${d.name}`, () => admin(`/${encodeURIComponent(d.name)}`, { method: "DELETE" }));
          } },
        armed === d.name ? "Confirm undeploy" : "Undeploy")),
    ]);
    if (!rows.length) return h("p", { class: "muted" }, "No deployment.");
    return table(`${rows.length} deployment${rows.length === 1 ? "" : "s"}`,
      ["Name", "Status", "Version", "Managed by", "Source", "Last refusal", ""], rows,
      { class: "deployments stack" });
  }

  const form = h("form", { id: "deploy-form", onsubmit: (e) => {
    e.preventDefault();
    const body = { path: path.value.trim() };
    if (name.value.trim()) body.name = name.value.trim();
    act("Deploy", () => admin("", { method: "POST", body }));
  } },
  h("div", { class: "field" }, h("label", { for: "deploy-path" }, "Model on the server"), path),
  h("div", { class: "field" }, h("label", { for: "deploy-name" }, "Name"), name),
  h("button", { type: "submit", id: "deploy-submit" }, "Deploy"));

  const section = h("section", { id: "deployments-section", hidden: true },
    h("h2", {}, "Deployments"),
    h("p", {}, "Upgrades take over only after the new version passes its self-test; the old one keeps serving otherwise."),
    h("div", { class: "field" }, h("label", { for: "deploy-token" }, "Admin token"), token,
      " ", h("button", { type: "button", id: "deploy-show", onclick: refresh }, "Show")),
    status, list, form);
  let timer = null;
  let left = false;
  onCleanup(() => {
    left = true;
    clearInterval(timer);
  });
  hostHasAdminApi().then((has) => {
    section.dataset.adminApi = has ? "yes" : "no";
    if (!has || left) return;
    section.hidden = false;
    timer = setInterval(refresh, REFRESH_MS);
    refresh();
  });
  return section;
}

/** Whether this host answers the admin API: it asks for a token (401) where it does. */
async function hostHasAdminApi() {
  try {
    await call("/admin/deployments");
    return true;
  } catch (e) {
    return e.status === 401 || e.status === 403;
  }
}
