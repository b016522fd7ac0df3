// Calls to the services on this origin. Every failure becomes an `ApiError` carrying the
// service's own message (the `error` field of its JSON error body), so the page always says
// what went wrong instead of going blank.

export class ApiError extends Error {
  constructor(message, status, code, body) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/** Longest a call may take before the page gives up on it. */
const TIMEOUT_MS = 15000;

/** Fetches `path` and returns the parsed JSON body; throws `ApiError` on any failure.
 *  `timeoutMs` is for the few calls that take longer by nature (a model writing a reply). */
export async function call(path, { method = "GET", body, token, timeoutMs = TIMEOUT_MS } = {}) {
  const headers = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
      cache: "no-store",
    });
  } catch (e) {
    const why = e && e.name === "TimeoutError"
      ? `no answer within ${timeoutMs / 1000} s`
      : "the service could not be reached";
    throw new ApiError(`${method} ${path}: ${why}`, 0, "network", null);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) {
    const message = data && typeof data.error === "string" ? data.error
      : data && typeof data.message === "string" ? data.message
        : `${method} ${path} answered HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ""}`;
    throw new ApiError(message, response.status, data && data.error_code, data);
  }
  if (data === null && text) {
    throw new ApiError(`${method} ${path} did not answer JSON`, response.status, "not_json", text);
  }
  return data;
}

/** The base path of a model the app serves: `/models/<name>`. */
export function modelPath(name) {
  return `/models/${encodeURIComponent(name)}`;
}

/** Calls every path at once; each entry is `{ ok, value }` or `{ ok: false, error }`. */
export async function callAll(paths) {
  const settled = await Promise.allSettled(paths.map((p) => call(p)));
  return settled.map((s) => (s.status === "fulfilled"
    ? { ok: true, value: s.value }
    : { ok: false, error: s.reason }));
}

/** The console's configuration (`/console.json`): the models served under `/models/`. Under
 *  `runtime-host up` models can be added while it runs: each registration `up` made
 *  (`runtime-host/<name>`) whose `/models/<name>/health` answers on this origin is added, so
 *  every page sees the models served now. Asked again for every page. */
export async function consoleConfig() {
  const config = await call("console.json");
  const known = new Set(config.models);
  let listing = null;
  try {
    listing = await call("/registry");
  } catch {
    return config; // no registry on this origin: the configured list is all there is
  }
  const candidates = listing.registrations
    .map((r) => /^runtime-host\/([A-Za-z0-9._-]+)$/.exec(r.app_name))
    .filter((m) => m && !known.has(m[1]))
    .map((m) => m[1]);
  const served = await Promise.all(candidates.map(async (name) => {
    try {
      await call(`${modelPath(name)}/health`);
      return name;
    } catch {
      return null;
    }
  }));
  const added = served.filter(Boolean);
  return { ...config, models: [...config.models, ...added].sort() };
}
