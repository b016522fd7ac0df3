// Trying an image or audio model: a file from the picker or dropped on the drop zone, a URL,
// or one of the model's examples, sent as the specification's base64 or URL input. What was
// sent is shown beside the answer (the picture, or a player for the sound), so a surprising
// answer can be checked against what the model was actually given.

import { h } from "./dom.js";

/** The media kinds the specification names, with what the form calls them. */
const KINDS = {
  image: { noun: "picture", example: "https://example.org/digit.png" },
  audio: { noun: "sound", example: "https://example.org/seven.wav" },
};

/** Larger files are refused here: encoding them to base64 would stall the tab for a request
 *  every model refuses anyway (the manifests' default limit is 10 MiB). */
const MAX_FILE_BYTES = 32 * 1024 * 1024;

/** Pictures at most this many pixels on their longer side are tiny (8x8 digits): shown
 *  scaled up by a whole factor with sharp pixels, instead of as a dot or a blur. */
const TINY = 64;
const TINY_SHOWN_PX = 192;

/** "image" or "audio" when the model takes one (its request format, or else its
 *  capabilities say so), otherwise null: the form for text and tables is used. */
export function mediaKind(inputTypes, format) {
  if (format.input_type in KINDS) return format.input_type;
  return inputTypes.find((t) => t in KINDS) ?? null;
}

/** The file type a base64 file's first bytes show. Examples arrive without a type, and a
 *  dropped file's type comes from its name, which may be wrong or missing. */
function sniff(base64) {
  let head;
  try {
    head = atob(base64.slice(0, 24));
  } catch {
    return null;
  }
  const at = (i, text) => head.startsWith(text, i);
  if (at(0, "\x89PNG")) return "image/png";
  if (at(0, "\xff\xd8\xff")) return "image/jpeg";
  if (at(0, "GIF8")) return "image/gif";
  if (at(0, "BM")) return "image/bmp";
  if (at(0, "RIFF") && at(8, "WEBP")) return "image/webp";
  if (at(0, "RIFF") && at(8, "WAVE")) return "audio/wav";
  if (at(0, "fLaC")) return "audio/flac";
  if (at(0, "OggS")) return "audio/ogg";
  return null;
}

/** A data: URL showing a base64 file, typed by its content. */
function dataUrl(kind, base64, declared) {
  const type = sniff(base64) ?? (declared && declared.startsWith(`${kind}/`) ? declared
    : kind === "image" ? "image/png" : "audio/wav");
  return `data:${type};base64,${base64}`;
}

function size(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** What an example sends: its base64 file (`image`/`audio`) or its URL (`image_url`/...),
 *  as `{ data, src, label, caption }`, the input `send` of mediaForm takes; null when the
 *  example holds neither. */
export function exampleInput(kind, example) {
  const file = example[kind];
  const url = example[`${kind}_url`];
  if (typeof file === "string" && file) {
    const bytes = Math.floor((file.length * 3) / 4);
    return { data: { [kind]: file }, src: dataUrl(kind, file), label: example.name,
      caption: `${example.name}: the example's ${KINDS[kind].noun}, about ${size(bytes)}` };
  }
  if (typeof url === "string" && url) {
    return { data: { [`${kind}_url`]: url }, src: url, label: example.name, caption: url };
  }
  return null;
}

/** The request for `input`: the format's fixed values (those not `<placeholders>`) and the
 *  input's own field. */
export function mediaRequest(kind, format, input) {
  const fixed = Object.entries(format.data ?? {})
    .filter(([, v]) => !(typeof v === "string" && v.startsWith("<") && v.endsWith(">")));
  return { input_type: kind, data: { ...Object.fromEntries(fixed), ...input.data } };
}

/** What the examples list shows of an example: a small picture of an inline (base64) image,
 *  and a URL example's address as text only. The examples come from the model directory, so
 *  an image there would make every visitor's browser fetch an address of the directory's
 *  choosing just by opening the page; a URL is loaded only once the user runs the example. */
export function exampleThumbnail(kind, input) {
  if (!input) return null;
  const url = input.data[`${kind}_url`];
  if (typeof url === "string") {
    return h("p", { class: "muted media-example-url" }, "From ", h("code", { class: "mono" }, url));
  }
  if (kind !== "image") return null;
  return sized(h("img", { class: "media-thumb", src: input.src, alt: `Example ${input.label}` }), 48);
}

/** Scales a tiny picture up by a whole factor to about `shown` pixels once it has loaded,
 *  with sharp pixels (CSS `pixelated`); a larger one keeps its size within the column. */
function sized(img, shown) {
  img.addEventListener("load", () => {
    const side = Math.max(img.naturalWidth, img.naturalHeight);
    const factor = side ? Math.floor(shown / side) : 0;
    if (side > TINY || factor < 2) return;
    img.classList.add("pixelated");
    img.style.width = `${img.naturalWidth * factor}px`;
  });
  return img;
}

/** What was sent, as the browser shows it: the picture, or a player for the sound. A source
 *  the browser cannot show (a URL it may not load, a file it cannot decode) leaves a line
 *  saying so instead of a broken-image icon; the model's own answer is beside it. */
export function mediaView(kind, input) {
  const shown = kind === "image"
    ? sized(h("img", { class: "media-sent", src: input.src, alt: `The picture sent: ${input.label}` }),
      TINY_SHOWN_PX)
    : h("audio", { class: "media-sent", controls: true, preload: "metadata", src: input.src,
      "aria-label": `The sound sent: ${input.label}` });
  const note = h("p", { class: "muted", hidden: true },
    `This browser cannot show the ${KINDS[kind].noun} itself.`);
  shown.addEventListener("error", () => {
    shown.hidden = true;
    note.hidden = false;
  });
  return h("figure", { class: "media", id: "media-shown" }, shown, note,
    h("figcaption", { class: "muted" }, input.caption));
}

/** Reads a file as base64 (FileReader's data: URL without its `data:...;base64,` prefix). */
function readBase64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      resolve(url.slice(url.indexOf(",") + 1));
    };
    reader.onerror = () => reject(reader.error ?? new Error("the file could not be read"));
    reader.readAsDataURL(file);
  });
}

/** The inputs of an image or audio model: a file (picker, or dropped on the zone) and a URL.
 *  Each calls `send(input)` with `{ data, src, label, caption }`; a file the browser cannot
 *  read, or one too large to send, is said in the form's status line instead. */
export function mediaForm(kind, send) {
  const { noun, example } = KINDS[kind];
  const status = h("p", { id: "media-status", role: "status", "aria-live": "polite" });
  const say = (text, bad) => {
    status.textContent = text;
    status.className = bad ? "error" : "muted";
  };

  async function take(file, note = "") {
    if (file.size > MAX_FILE_BYTES) {
      say(`${file.name} is ${size(file.size)}: larger than the ${size(MAX_FILE_BYTES)} this page sends.`, true);
      return;
    }
    say(`Reading ${file.name}…`);
    let base64;
    try {
      base64 = await readBase64(file);
    } catch (e) {
      say(`${file.name} could not be read: ${e.message}`, true);
      return;
    }
    say(`Sent ${file.name} (${size(file.size)})${note}.`);
    send({ data: { [kind]: base64 }, src: dataUrl(kind, base64, file.type), label: file.name,
      caption: `${file.name}, ${size(file.size)}` });
  }

  const picker = h("input", { type: "file", id: "media-file", name: "file", accept: `${kind}/*` });
  picker.addEventListener("change", () => {
    if (picker.files.length) take(picker.files[0]);
  });
  const zone = h("div", { id: "media-drop", class: "drop-zone" },
    h("p", {}, `Drop a ${noun} file here, or choose one.`),
    h("label", { for: "media-file" }, `${noun[0].toUpperCase()}${noun.slice(1)} file`), picker);
  // The browser opens a file dropped anywhere else; on the zone it is read instead.
  for (const type of ["dragenter", "dragover"]) {
    zone.addEventListener(type, (e) => {
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = "copy";
      zone.classList.add("over");
    });
  }
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    const files = e.dataTransfer ? [...e.dataTransfer.files] : [];
    if (!files.length) {
      say(`Nothing to read: drop a ${noun} file.`, true);
      return;
    }
    take(files[0], files.length > 1 ? `, the first of the ${files.length} files dropped` : "");
  });

  const url = h("input", { type: "url", id: "media-url", name: `${kind}_url`, placeholder: example,
    autocomplete: "off" });
  const byUrl = h("form", { id: "media-url-form", novalidate: true },
    h("div", { class: "field" }, h("label", { for: "media-url" }, `URL of a ${noun}`), url,
      h("p", { class: "muted" }, "The model fetches it itself, from the hosts it is allowed to reach.")),
    h("button", { type: "submit" }, "Predict from URL"));
  byUrl.addEventListener("submit", (e) => {
    e.preventDefault();
    const target = url.value.trim();
    if (!target) {
      say(`Enter the URL of a ${noun} first.`, true);
      return;
    }
    say(`Sent ${target}.`);
    send({ data: { [`${kind}_url`]: target }, src: target, label: target, caption: target });
  });
  return h("div", { id: "media-form" }, zone, byUrl, status);
}
