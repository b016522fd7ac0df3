// Molecules drawn. Every SMILES the console shows becomes a picture the console component
// draws (/depict.svg, the same under Spin and runtime-host), and a SMILES the parser refuses
// shows the parser's message under the input, pointing at the character it names.

import { h, replace } from "./dom.js";

/** How long typing must pause before the preview is redrawn. */
const TYPING_PAUSE_MS = 250;

export function structureUrl(smiles) {
  return `/depict.svg?smiles=${encodeURIComponent(smiles)}`;
}

/** Each size of drawing: the scale of the drawing's own size (one bond length for every
 *  molecule, as chemists draw them) and the box it must fit; only what does not fit is
 *  shrunk further. */
const SIZES = {
  small: { scale: 0.5, width: 144, height: 160 },
  medium: { scale: 0.75, width: 256, height: 240 },
  large: { scale: 1, width: 416, height: 352 },
};

/** The molecule as an image (loaded when scrolled into view), described for screen readers,
 *  at its size's bond length. A drawing that fails to load (a SMILES the parser refuses)
 *  gives way to a line saying so, never a broken-image icon. */
export function structure(smiles, size = "medium") {
  const fit = SIZES[size] ?? SIZES.medium;
  return h("img", {
    class: `structure ${size}`,
    src: structureUrl(smiles),
    alt: `Structure of ${smiles}`,
    loading: "lazy",
    decoding: "async",
    onload: (e) => {
      const img = e.target;
      if (!img.naturalWidth || !img.naturalHeight) return;
      const scale = Math.min(fit.scale, fit.width / img.naturalWidth, fit.height / img.naturalHeight);
      img.style.width = `${Math.round(img.naturalWidth * scale)}px`;
      img.dataset.scale = scale.toFixed(3);
    },
    onerror: (e) => e.target.replaceWith(
      h("span", { class: "muted structure-missing" }, "(no drawing: this SMILES cannot be read)")),
  });
}

/** The parser's message with the SMILES above it and a caret under the character named by
 *  the `smiles-error-position` header (1-based). */
function parseError(smiles, body, position) {
  const at = /^[0-9]+$/.test(position ?? "") ? Number(position) : null;
  const shown = at !== null && at >= 1 && at <= smiles.length + 1
    ? h("pre", { class: "smiles-caret", "aria-hidden": "true" },
      smiles.slice(0, at - 1), h("mark", {}, smiles.slice(at - 1, at) || " "), smiles.slice(at),
      "\n", " ".repeat(at - 1), "^")
    : null;
  return h("div", { class: "smiles-error", role: "alert" },
    shown, h("p", {}, body.error ?? "this SMILES cannot be read"));
}

/** A live drawing of what `input` holds: redrawn as the user types, or the parser's message.
 *  Returns the element to place under the input; `update()` on it redraws at once. */
export function smilesPreview(input) {
  const area = h("div", { class: "smiles-preview", id: `${input.id}-preview`, "aria-live": "polite" });
  input.setAttribute("aria-describedby", area.id);
  let timer = null;
  let latest = 0;
  const update = async () => {
    const smiles = input.value.trim();
    const mine = ++latest;
    if (!smiles) {
      input.removeAttribute("aria-invalid");
      replace(area);
      return;
    }
    try {
      const response = await fetch(structureUrl(smiles));
      if (mine !== latest) return;
      if (response.ok) {
        input.removeAttribute("aria-invalid");
        replace(area, structure(smiles, "large"));
      } else {
        const body = await response.json().catch(() => ({}));
        if (mine !== latest) return;
        input.setAttribute("aria-invalid", "true");
        replace(area, parseError(smiles, body, response.headers.get("smiles-error-position")));
      }
    } catch {
      // The drawing is a help, not the answer: a failed fetch leaves the area empty.
      replace(area);
    }
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(update, TYPING_PAUSE_MS);
  });
  area.update = update;
  return area;
}
