/**
 * The console's client of the node's HTTP API. The user's API key lives in this tab's session
 * storage only and travels in `Authorization: Bearer`, never in a URL. Error answers become
 * `ApiError`s carrying the ES error `type` and `reason`.
 */

/** Session storage key of the API key. */
const KEY_STORAGE = 'trove.console.api_key';

/** An error answer of the API: HTTP status, ES error type and reason. */
export class ApiError extends Error {
  constructor(status, type, reason, body) {
    super(reason);
    this.status = status;
    this.type = type;
    this.body = body;
  }
}

/** The API key of this tab's session, or null. */
export function storedKey() {
  return sessionStorage.getItem(KEY_STORAGE);
}

/** Keeps the API key for this tab's session. */
export function storeKey(key) {
  sessionStorage.setItem(KEY_STORAGE, key);
}

/** Forgets the API key (sign out). */
export function forgetKey() {
  sessionStorage.removeItem(KEY_STORAGE);
}

/** `path` with `query` (an object of parameters; undefined values left out) as its query string. */
export function withQuery(path, query) {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined && value !== null) parameters.set(name, String(value));
  const text = parameters.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** A path segment (collection, id, node) escaped for a URL. */
export function segment(value) {
  return encodeURIComponent(value);
}

/** The headers of a request with the session's key (or `key`, while signing in). */
function headersFor(key, hasBody) {
  const headers = { accept: 'application/json' };
  const apiKey = key ?? storedKey();
  if (apiKey !== null) headers.authorization = `Bearer ${apiKey}`;
  if (hasBody) headers['content-type'] = 'application/json';
  return headers;
}

/** Turns an error answer into an `ApiError`. */
async function failure(response) {
  const text = await response.text();
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the text is the reason
  }
  const type = body?.error?.type ?? `http_${response.status}`;
  const reason = body?.error?.reason ?? (text || response.statusText);
  return new ApiError(response.status, type, reason, body);
}

/**
 * Calls the API: `method` and `path` (with its query string), an optional JSON `body`, an
 * AbortSignal. Returns the parsed JSON answer (or the text of a non-JSON one).
 */
export async function call(method, path, { body, signal, key, query } = {}) {
  const response = await fetch(withQuery(path, query), {
    method,
    headers: headersFor(key, body !== undefined),
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
    cache: 'no-store',
    credentials: 'omit',
  });
  if (!response.ok) throw await failure(response);
  const type = response.headers.get('content-type') ?? '';
  return type.includes('json') ? response.json() : response.text();
}

/** Shorthands of `call` by method. */
export const api = {
  get: (path, options) => call('GET', path, options),
  post: (path, body, options) => call('POST', path, { ...options, body }),
  put: (path, body, options) => call('PUT', path, { ...options, body }),
  delete: (path, options) => call('DELETE', path, options),
};

/**
 * Reads a Server-Sent Events answer (`feed=eventsource`) with the session's key. EventSource
 * cannot send headers, so the stream is a `fetch` read chunk by chunk. Calls `onEvent({event, id,
 * data})` per event; resolves when the stream ends, rejects with an AbortError when `signal` fires.
 */
export async function readEventStream(path, { signal, onEvent }) {
  const response = await fetch(path, { headers: { ...headersFor(null, false), accept: 'text/event-stream' }, signal, cache: 'no-store', credentials: 'omit' });
  if (!response.ok) throw await failure(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let event = { event: 'message', id: null, data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (event.data.length > 0 || event.event !== 'message') onEvent({ event: event.event, id: event.id, data: event.data.join('\n') });
        event = { event: 'message', id: null, data: [] };
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const fieldValue = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'data') event.data.push(fieldValue);
      else if (field === 'id') event.id = fieldValue;
      else if (field === 'event') event.event = fieldValue;
    }
  }
}
