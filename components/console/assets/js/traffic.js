// A model's live traffic: /predict requests per second and p50/p99 latency over the last
// minutes, charted as they come. Under `runtime-host up` the figures are the host's own
// (its Prometheus metrics on this origin, /metrics: the request counter and the latency
// histogram of the model's deployment); where there are none (Spin), the model's /metrics
// (its request count and mean latency) is polled instead, and the chart says so.

import { h, replace, num } from "./dom.js";
import { lineChart } from "./charts.js";

const POLL_MS = 2000;
const WINDOW_MS = 5 * 60 * 1000;

/** The /predict counter and latency buckets of `deployment` in Prometheus text. */
export function readPrometheus(text, deployment) {
  let requests = 0;
  const buckets = new Map();
  let found = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^(runtime_host_http_request(?:s_total|_duration_seconds_bucket))\{([^}]*)\} ([0-9.eE+-]+|\+Inf)/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[2].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (labels.deployment !== deployment || labels.route !== "/predict") continue;
    found = true;
    const value = Number(m[3]);
    if (m[1].endsWith("_total")) requests += value;
    else {
      const le = labels.le === "+Inf" ? Infinity : Number(labels.le);
      buckets.set(le, (buckets.get(le) ?? 0) + value);
    }
  }
  return found ? { requests, buckets } : null;
}

/** The `q` quantile (seconds) of the requests between two cumulative histograms. */
export function quantile(q, before, after) {
  const les = [...after.keys()].sort((a, b) => a - b);
  const delta = les.map((le) => [le, (after.get(le) ?? 0) - (before.get(le) ?? 0)]);
  const total = delta.length ? delta[delta.length - 1][1] : 0;
  if (total <= 0) return NaN;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const [le, count] of delta) {
    if (count >= rank) {
      if (!Number.isFinite(le)) return prevLe;
      const inBucket = count - prevCount;
      return inBucket > 0 ? prevLe + ((le - prevLe) * (rank - prevCount)) / inBucket : le;
    }
    prevLe = le;
    prevCount = count;
  }
  return prevLe;
}

/** The traffic section of model `name` (served under `base`): charts updated every 2 s. */
export function trafficSection(name, base, onCleanup) {
  const now = h("p", { id: "traffic-now", "aria-live": "polite" }, "Measuring…");
  const charts = h("div", { class: "plots", id: "traffic-charts" });
  const source = h("p", { class: "muted", id: "traffic-source" });
  const rps = [];
  const p50 = [];
  const p99 = [];
  const mean = [];
  let last = null;
  let mode = null;

  async function sample() {
    const t = Date.now();
    if (mode !== "model") {
      const r = await fetch("/metrics").catch(() => null);
      // The host answers in the OpenMetrics text format; anything else (the console's 404
      // under Spin) means there are no host metrics here.
      const type = r && r.ok ? r.headers.get("content-type") ?? "" : "";
      const text = /openmetrics-text|text\/plain/.test(type) ? await r.text() : null;
      if (text !== null) {
        // Host metrics: a deployment that has answered no /predict yet has no lines: zero.
        mode = "host";
        const read = readPrometheus(text, name);
        return { t, requests: read?.requests ?? 0, buckets: read?.buckets ?? new Map() };
      }
      mode = "model";
    }
    const r = await fetch(`${base}/metrics`);
    if (!r.ok) throw new Error(`${base}/metrics answered ${r.status}`);
    const m = await r.json();
    return { t, requests: m.requests_served, latencySum: m.avg_latency_ms * m.requests_served };
  }

  function draw() {
    const nowMs = Date.now();
    replace(charts,
      lineChart({ series: [{ name: "requests/s", cls: "rps", points: rps }], yLabel: "requests per second",
        label: `${name}: /predict requests per second over the last ${WINDOW_MS / 60000} minutes`,
        now: nowMs, windowMs: WINDOW_MS, cls: "traffic-rps" }),
      lineChart({
        series: mode === "host"
          ? [{ name: "p50", cls: "p50", points: p50 }, { name: "p99", cls: "p99", points: p99 }]
          : [{ name: "mean", cls: "p50", points: mean }],
        yLabel: "latency (ms)", label: `${name}: /predict latency over the last ${WINDOW_MS / 60000} minutes`,
        now: nowMs, windowMs: WINDOW_MS, cls: "traffic-latency" }));
    source.textContent = mode === "host"
      ? "From the host's metrics (/metrics): every /predict the deployment answered."
      : "From the model's /metrics (no host metrics here): requests and mean latency only.";
  }

  async function tick() {
    try {
      const cur = await sample();
      if (last) {
        const dt = (cur.t - last.t) / 1000;
        const n = Math.max(0, cur.requests - last.requests);
        rps.push([cur.t, n / dt]);
        if (cur.buckets) {
          p50.push([cur.t, quantile(0.5, last.buckets, cur.buckets) * 1000]);
          p99.push([cur.t, quantile(0.99, last.buckets, cur.buckets) * 1000]);
        } else {
          mean.push([cur.t, n ? (cur.latencySum - last.latencySum) / n : NaN]);
        }
        for (const sr of [rps, p50, p99, mean]) while (sr.length && cur.t - sr[0][0] > WINDOW_MS) sr.shift();
        const latest = (sr) => (sr.length ? sr[sr.length - 1][1] : NaN);
        const ms = (v) => (Number.isFinite(v) ? `${num(v, 2)} ms` : "–");
        now.textContent = mode === "host"
          ? `Now: ${num(latest(rps), 1)} requests/s, p50 ${ms(latest(p50))}, p99 ${ms(latest(p99))}.`
          : `Now: ${num(latest(rps), 1)} requests/s, mean ${ms(latest(mean))}.`;
      }
      last = cur;
      draw();
    } catch (e) {
      now.textContent = `Traffic unavailable: ${e.message}`;
    }
  }

  tick();
  const timer = setInterval(tick, POLL_MS);
  onCleanup(() => clearInterval(timer));
  return h("section", { class: "part", id: "traffic" },
    h("h2", {}, "Traffic"), now, charts, source);
}
