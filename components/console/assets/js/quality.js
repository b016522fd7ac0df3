// A model's evidence of quality, from its own GET /evidence (the served model judged on the
// test set its directory ships): the parity plot, residuals against the similarity of the
// nearest training molecule with the applicability-domain threshold, a confusion matrix.
// A model without evidence shows nothing.

import { h, num, table } from "./dom.js";
import { scatter, confusion, extent } from "./charts.js";

function parityPlot(e) {
  const p = e.parity;
  const values = p.points.flatMap((q) => [q.measured, q.predicted]);
  const [lo, hi] = extent(values);
  const unit = e.unit ? ` (${e.unit})` : "";
  const label = `Parity plot: predicted against measured ${e.property} for ${p.points.length} test molecules; ` +
    `RMSE ${num(p.rmse, 3)}, MAE ${num(p.mae, 3)}, R² ${num(p.r2, 3)}`;
  return h("figure", { class: "plot", id: "parity-plot" },
    scatter({
      points: p.points.map((q) => ({ x: q.measured, y: q.predicted,
        title: `${q.name}: measured ${q.measured}, predicted ${q.predicted}` })),
      xDomain: [lo, hi], yDomain: [lo, hi],
      xLabel: `measured ${e.property}${unit}`, yLabel: `predicted ${e.property}${unit}`,
      lines: [{ x1: lo, y1: lo, x2: hi, y2: hi, cls: "diagonal" }],
      label, cls: "parity",
    }),
    h("figcaption", {}, h("strong", {}, "Parity. "),
      `${p.points.length} test molecules; RMSE ${num(p.rmse, 3)}, MAE ${num(p.mae, 3)}, R² ${num(p.r2, 3)}. `,
      "Points on the diagonal are predicted exactly."));
}

function residualPlot(e) {
  const r = e.residuals;
  const ys = r.points.map((q) => q.residual);
  const [ylo, yhi] = extent(ys);
  const inside = r.points.filter((q) => q.similarity >= r.threshold).length;
  const label = `Residuals (predicted minus measured ${e.property}) against the Tanimoto similarity of the ` +
    `nearest training molecule; ${inside} of ${r.points.length} inside the applicability domain (similarity ≥ ${r.threshold})`;
  return h("figure", { class: "plot", id: "residual-plot" },
    scatter({
      points: r.points.map((q) => ({ x: q.similarity, y: q.residual, cls: q.similarity >= r.threshold ? "inside" : "outside",
        title: `${q.name}: similarity ${q.similarity}, residual ${q.residual}` })),
      xDomain: [0, 1], yDomain: [ylo, yhi],
      xLabel: "similarity of the nearest training molecule", yLabel: "predicted − measured",
      lines: [
        { x1: 0, y1: 0, x2: 1, y2: 0, cls: "zero" },
        { x1: r.threshold, y1: ylo, x2: r.threshold, y2: yhi, cls: "threshold", label: `domain ≥ ${r.threshold}` },
      ],
      label, cls: "residuals",
    }),
    h("figcaption", {}, h("strong", {}, "Residuals against similarity. "),
      `${inside} of ${r.points.length} test molecules lie inside the applicability domain (right of the line); `,
      "errors grow as molecules get less like the training set."));
}

function confusionPlot(e) {
  const c = e.confusion;
  const total = c.counts.flat().reduce((a, b) => a + b, 0);
  const label = `Confusion matrix of ${total} test rows: accuracy ${num(c.accuracy * 100, 1)} %`;
  return h("figure", { class: "plot", id: "confusion-plot" },
    confusion({ labels: c.labels, counts: c.counts, label }),
    h("figcaption", {}, h("strong", {}, "Confusion matrix. "),
      `${total} test rows, accuracy ${num(c.accuracy * 100, 1)} %: rows are the true ${e.property}, columns the prediction.`),
    h("details", {}, h("summary", {}, "As a table"),
      table("Confusion matrix", ["true \\ predicted", ...c.labels],
        c.labels.map((l, i) => [l, ...c.counts[i].map(String)]))));
}

/** The plots of `evidence`, or null when there is nothing to show. */
export function qualitySection(evidence) {
  const plots = [
    evidence.parity ? parityPlot(evidence) : null,
    evidence.residuals ? residualPlot(evidence) : null,
    evidence.confusion ? confusionPlot(evidence) : null,
  ].filter(Boolean);
  if (!plots.length) return null;
  return h("section", { class: "part", id: "quality" },
    h("h2", {}, "Quality on the test set"),
    h("p", { class: "muted" }, evidence.test_set, "; computed by this deployment's model."),
    h("div", { class: "plots" }, plots));
}
