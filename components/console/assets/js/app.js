// The console's router: the part of the URL after `#` names the page, so every page can be
// bookmarked and the browser's back button works, with no server-side routing at all.
//
//   #/models            registrations (live) and the models this app serves
//   #/models/<name>     one model: health, metrics, info, citation, capabilities, ranges
//   #/try/<name>        run a model's test examples or a request of your own
//   #/batch             score a library through a model (batches, histogram, CSV)
//   #/chats             the chat list
//   #/chats/<id>        one dialog, and appending to it with the admin token

import { h, replace, errorBox } from "./dom.js";
import { modelsPage, modelPage } from "./models.js";
import { tryPage } from "./tryit.js";
import { chatsPage, dialogPage } from "./chats.js";
import { batchPage } from "./batch.js";

const main = document.getElementById("main");

/** Work the shown page left running (timers), stopped when another page is shown. */
let cleanups = [];
/** Counts navigations: a page whose render finishes after a newer one started is dropped. */
let shown = 0;

function route(hash) {
  const decode = (p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  };
  const parts = hash.replace(/^#\/?/, "").split("/").map(decode);
  const [section = "models", arg] = parts;
  switch (section) {
    case "":
    case "models":
      return arg ? ["models", `Model ${arg}`, (c) => modelPage(arg, c)] : ["models", "Models", modelsPage];
    case "try":
      return ["try", arg ? `Try ${arg}` : "Try it", () => tryPage(arg)];
    case "batch":
      return ["batch", "Batch", batchPage];
    case "chats":
      return arg ? ["chats", `Dialog ${arg}`, () => dialogPage(arg)] : ["chats", "Chats", chatsPage];
    default:
      return ["", "Not found", async () => errorBox({ message: `there is no page #/${parts.join("/")}` })];
  }
}

async function show() {
  cleanups.forEach((stop) => stop());
  const mine = ++shown;
  const local = [];
  cleanups = local;
  const [section, title, render] = route(location.hash);
  document.title = `${title} · Model runtime console`;
  for (const link of document.querySelectorAll("nav a")) {
    if (link.dataset.section === section) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  replace(main, h("p", { class: "loading", role: "status" }, "Loading…"));
  // Work registered after a newer navigation started is stopped at once.
  const onCleanup = (stop) => (mine === shown ? local.push(stop) : stop());
  let content;
  try {
    content = await render(onCleanup);
  } catch (e) {
    content = errorBox(e, `Could not show ${title}`);
  }
  if (mine !== shown) return;
  replace(main, content);
  const heading = main.querySelector("h1");
  if (heading) {
    heading.setAttribute("tabindex", "-1");
    if (navigated) heading.focus({ preventScroll: true });
  }
}

let navigated = false;
window.addEventListener("hashchange", () => {
  navigated = true;
  show();
});
show();
