// Charts drawn as SVG here: scatter plots (a model's parity and residual plots), a confusion
// matrix and live line charts (traffic). They scale with their column through the viewBox,
// so they read at phone width too; each is an image with a label saying what it shows (for
// screen readers), and every point has a title (for a pointer).

const NS = "http://www.w3.org/2000/svg";
const W = 440;
const H = 320;
const M = { left: 56, right: 16, top: 16, bottom: 48 };

/** An SVG element: `s("circle", { cx: 1 }, child...)`. */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null && v !== false) el.setAttribute(k, String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** About `count` round tick values covering [lo, hi]. */
export function ticks(lo, hi, count = 5) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((f) => f * mag).find((st) => st >= raw) ?? raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    out.push(Math.abs(v) < step * 1e-9 ? 0 : Number(v.toPrecision(12)));
  }
  return out;
}

/** [lo, hi] of `values`, padded by 5 % (and never empty). */
export function extent(values, pad = 0.05) {
  const finite = values.filter(Number.isFinite);
  if (!finite.length) return [0, 1];
  let lo = Math.min(...finite);
  let hi = Math.max(...finite);
  if (hi === lo) { lo -= 1; hi += 1; }
  const d = (hi - lo) * pad;
  return [lo - d, hi + d];
}

const fmt = (v) => (Math.abs(v) >= 1000 ? v.toLocaleString("en-GB") : String(Number(v.toPrecision(4))));

/** Axes, ticks and titles of a plot; returns the SVG and its scales. */
function frame({ xDomain, yDomain, xLabel, yLabel, label, cls, xTick = fmt }) {
  const [x0, x1] = xDomain;
  const [y0, y1] = yDomain;
  const x = (v) => M.left + ((v - x0) / (x1 - x0)) * (W - M.left - M.right);
  const y = (v) => H - M.bottom - ((v - y0) / (y1 - y0)) * (H - M.top - M.bottom);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: `chart ${cls ?? ""}`, role: "img", "aria-label": label },
    s("title", {}, label));
  const axes = s("g", { class: "axes" });
  for (const t of ticks(x0, x1)) {
    axes.append(s("line", { class: "grid", x1: x(t), x2: x(t), y1: M.top, y2: H - M.bottom }),
      s("text", { class: "tick", x: x(t), y: H - M.bottom + 16, "text-anchor": "middle" }, xTick(t)));
  }
  for (const t of ticks(y0, y1)) {
    axes.append(s("line", { class: "grid", x1: M.left, x2: W - M.right, y1: y(t), y2: y(t) }),
      s("text", { class: "tick", x: M.left - 6, y: y(t) + 4, "text-anchor": "end" }, fmt(t)));
  }
  axes.append(
    s("line", { class: "axis", x1: M.left, x2: W - M.right, y1: H - M.bottom, y2: H - M.bottom }),
    s("line", { class: "axis", x1: M.left, x2: M.left, y1: M.top, y2: H - M.bottom }),
    s("text", { class: "axis-title x-title", x: (M.left + W - M.right) / 2, y: H - 8, "text-anchor": "middle" }, xLabel),
    s("text", { class: "axis-title y-title", x: 14, y: (M.top + H - M.bottom) / 2, "text-anchor": "middle",
      transform: `rotate(-90 14 ${(M.top + H - M.bottom) / 2})` }, yLabel));
  svg.append(axes);
  return { svg, x, y, clip: [x0, x1, y0, y1] };
}

/** A scatter plot. `points`: [{x, y, title}]; `lines`: [{x1, y1, x2, y2, cls, label}] in data
 *  units (a parity plot's diagonal, a threshold). */
export function scatter({ points, xDomain, yDomain, xLabel, yLabel, label, lines = [], cls }) {
  const { svg, x, y } = frame({ xDomain, yDomain, xLabel, yLabel, label, cls });
  for (const l of lines) {
    svg.append(s("line", { class: `guide ${l.cls ?? ""}`, x1: x(l.x1), y1: y(l.y1), x2: x(l.x2), y2: y(l.y2) }));
    if (l.label) {
      svg.append(s("text", { class: `guide-label ${l.cls ?? ""}`, x: x(l.x2) - 4, y: Math.max(y(l.y2), M.top) + 12,
        "text-anchor": "end" }, l.label));
    }
  }
  const dots = s("g", { class: "points" });
  for (const p of points) {
    dots.append(s("circle", { class: `point ${p.cls ?? ""}`, cx: x(p.x), cy: y(p.y), r: 3.2 }, s("title", {}, p.title)));
  }
  svg.append(dots);
  return svg;
}

/** A confusion matrix: true labels as rows, predicted as columns, cells shaded by count. */
export function confusion({ labels, counts, label }) {
  const n = labels.length;
  const size = 64;
  const left = 96;
  const top = 40;
  const w = left + n * size + 8;
  const h = top + n * size + 40;
  const max = Math.max(1, ...counts.flat());
  const svg = s("svg", { viewBox: `0 0 ${w} ${h}`, class: "chart confusion", role: "img", "aria-label": label },
    s("title", {}, label));
  svg.append(s("text", { class: "axis-title", x: left + (n * size) / 2, y: 14, "text-anchor": "middle" }, "predicted"));
  labels.forEach((l, j) => svg.append(s("text", { class: "tick", x: left + j * size + size / 2, y: top - 8,
    "text-anchor": "middle" }, l)));
  labels.forEach((truth, i) => {
    svg.append(s("text", { class: "tick", x: left - 8, y: top + i * size + size / 2 + 4, "text-anchor": "end" }, truth));
    labels.forEach((guess, j) => {
      const c = counts[i][j];
      const strong = c / max > 0.5;
      svg.append(s("g", { class: "cell" },
        s("rect", { class: i === j ? "hit" : "miss", x: left + j * size, y: top + i * size, width: size - 2, height: size - 2,
          "fill-opacity": (0.08 + 0.92 * (c / max)).toFixed(3) }, s("title", {}, `${c} ${truth} predicted as ${guess}`)),
        s("text", { class: strong ? "count strong" : "count", x: left + j * size + size / 2 - 1,
          y: top + i * size + size / 2 + 5, "text-anchor": "middle" }, c)));
    });
  });
  svg.append(s("text", { class: "axis-title", x: left + (n * size) / 2, y: h - 10, "text-anchor": "middle" }, "rows: true label"));
  return svg;
}

/** A line chart over time. `series`: [{name, cls, points: [[ms, value]]}]; the x axis spans
 *  `windowMs` up to `now`. */
export function lineChart({ series, yLabel, label, now, windowMs, cls, minTop = 1 }) {
  const values = series.flatMap((sr) => sr.points.map((p) => p[1]));
  // An idle chart still has a readable scale (0 to 1, not 0 to 1e-9).
  const top = Math.max(minTop, ...values.filter(Number.isFinite));
  const { svg, x, y } = frame({
    xDomain: [-windowMs / 1000, 0], yDomain: [0, top * 1.15], xLabel: "seconds ago", yLabel, label, cls,
    xTick: (t) => fmt(-t),
  });
  for (const sr of series) {
    const d = sr.points
      .filter((p) => Number.isFinite(p[1]) && now - p[0] <= windowMs)
      .map((p, i) => `${i ? "L" : "M"}${x((p[0] - now) / 1000).toFixed(1)},${y(p[1]).toFixed(1)}`)
      .join(" ");
    svg.append(s("path", { class: `series ${sr.cls ?? ""}`, d, "data-points": sr.points.length }));
  }
  const legend = s("g", { class: "legend" });
  series.forEach((sr, i) => legend.append(
    s("line", { class: `series ${sr.cls ?? ""}`, x1: M.left + 8 + i * 110, x2: M.left + 28 + i * 110, y1: M.top + 8, y2: M.top + 8 }),
    s("text", { class: "tick", x: M.left + 32 + i * 110, y: M.top + 12 }, sr.name)));
  svg.append(legend);
  return svg;
}
