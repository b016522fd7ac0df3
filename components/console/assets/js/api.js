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

/** Fetches `path` and returns the parsed JSON body; throws `ApiError` on any failure. */
export async function call(path, { method = "GET", body, token } = {}) {
  const headers = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(TIMEOUT_MS),
      cache: "no-store",
    });
  } catch (e) {
    const why = e && e.name === "TimeoutError"
      ? `no answer within ${TIMEOUT_MS / 1000} s`
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

let config = null;

/** The console's configuration (`/console.json`): the models served under `/models/`. */
export async function consoleConfig() {
  if (!config) {
    config = call("console.json").catch((e) => {
      config = null;
      throw e;
    });
  }
  return config;
}
