// The copilot's HTTP API as the page uses it. The GNS3 token lives in sessionStorage (this tab
// only, gone when the tab closes; never a cookie, never in a URL) and travels as a bearer header.

const TOKEN_KEY = 'gns3copilot.token';

/** ApiError carries the HTTP status and the server's {"message": ...} text. */
export class ApiError extends Error {
  constructor(status, message, kind) {
    super(message);
    this.status = status;
    this.kind = kind;
  }
}

let onExpired = () => {};

/** setExpiredHandler registers what to do when the server says the token is no longer valid. */
export function setExpiredHandler(fn) {
  onExpired = fn;
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}

/** classify names what an error means to a person, so the page can offer the right next step. */
export function classify(status, message) {
  const m = String(message || '');
  if (status === 401) return 'expired';
  if (status === 0) return 'network';
  if (/no LLM is configured|LLM model configuration|configure one/i.test(m)) return 'no-llm';
  if (status === 403 && /must be opened|opened to use chat/i.test(m)) return 'project-closed';
  if (status === 502 || status === 504 || /cannot be reached|unreachable/i.test(m)) return 'gns3-down';
  return 'other';
}

/** describeError says what went wrong in words a person can act on. */
export function describeError(err) {
  switch (err.kind) {
    case 'network':
      return 'The copilot service cannot be reached. Check your connection and that the service is running.';
    case 'gns3-down':
      return 'The GNS3 server cannot be reached right now. Check that it is running, then try again.';
    case 'project-closed':
      return 'This project is not opened in GNS3. Open it to chat about it.';
    case 'no-llm':
      return 'No LLM is configured for you yet. Add a model configuration in your LLM settings, or ask the operator to set a server default.';
    default:
      return err.message || 'Something went wrong.';
  }
}

async function errorFrom(res, authed) {
  let message = '';
  try {
    const text = await res.text();
    try {
      const body = JSON.parse(text);
      message = body.message || body.detail || body.error || '';
      if (typeof message !== 'string') message = JSON.stringify(message);
    } catch {
      message = text.trim().slice(0, 300);
    }
  } catch {
    // The body could not be read; the status alone must do.
  }
  if (!message) message = `The copilot answered ${res.status} ${res.statusText || ''}`.trim() + '.';
  const kind = classify(res.status, message);
  // A wrong password at sign-in is a 401 too, but no session has expired then.
  if (kind === 'expired' && authed) onExpired(message);
  return new ApiError(res.status, message, kind);
}

/**
 * request calls the API and returns the decoded JSON body (null for 204). With raw: true it
 * returns the Response itself once its status is known to be fine (used for SSE).
 */
export async function request(method, path, { body, headers = {}, signal, raw = false, auth = true, bearer } = {}) {
  const h = { Accept: raw ? 'text/event-stream' : 'application/json', ...headers };
  // A bearer given here (an API key being tried at sign-in) is not the session's: its refusal
  // expires nothing.
  const authed = auth && bearer === undefined && !!token();
  if (authed) h.Authorization = 'Bearer ' + token();
  else if (bearer) h.Authorization = 'Bearer ' + bearer;
  if (body !== undefined) h['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {
      method,
      headers: h,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'The copilot service cannot be reached. Check your connection and that the service is running.', 'network');
  }
  if (!res.ok) throw await errorFrom(res, authed);
  if (raw) return res;
  if (res.status === 204) return null;
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

export const api = {
  signIn: (username, password) =>
    request('POST', '/v3/access/users/authenticate', { body: { username, password }, auth: false }),
  me: () => request('GET', '/v3/access/users/me'),
  // meWith asks GNS3 (through the copilot) whose credential this is: an API key at sign-in.
  meWith: (bearer) => request('GET', '/v3/access/users/me', { bearer }),
  projects: () => request('GET', '/v3/projects'),
  openProject: (id) => request('POST', `/v3/projects/${enc(id)}/open`, { body: {} }),

  sessions: (p) => request('GET', `${chat(p)}/sessions`),
  history: (p, s) => request('GET', `${chat(p)}/sessions/${enc(s)}/history?limit=1000`),
  rename: (p, s, title) => request('PATCH', `${chat(p)}/sessions/${enc(s)}`, { body: { title } }),
  remove: (p, s) => request('DELETE', `${chat(p)}/sessions/${enc(s)}`),
  pin: (p, s, pinned) => request(pinned ? 'PUT' : 'DELETE', `${chat(p)}/sessions/${enc(s)}/pin`),
  abort: (p, s) => request('POST', `${chat(p)}/sessions/${enc(s)}/abort`, { body: {} }),
  // This page shows approval cards with buttons, so its streams stay open while a turn waits
  // for a decision; a client that does not say so gets the question as text and a closed stream.
  stream: (p, body, signal) =>
    request('POST', `${chat(p)}/stream`, { body: { ...body, approval_cards: true }, signal, raw: true }),
  inject: (p, body, signal) => request('POST', `${chat(p)}/inject`, { body, signal, raw: true }),
  join: (p, s, lastEventId, signal) =>
    request('GET', `${chat(p)}/sessions/${enc(s)}/stream?approval_cards=1`, {
      headers: lastEventId ? { 'Last-Event-ID': lastEventId } : {},
      signal,
      raw: true,
    }),

  providers: () => request('GET', '/v3/access/llm-providers'),
  llmConfigs: (u) => request('GET', `${llm(u)}`),
  ownLLMConfigs: (u) => request('GET', `${llm(u)}/own`),
  createLLMConfig: (u, body) => request('POST', `${llm(u)}`, { body }),
  updateLLMConfig: (u, id, body) => request('PUT', `${llm(u)}/${enc(id)}`, { body }),
  deleteLLMConfig: (u, id) => request('DELETE', `${llm(u)}/${enc(id)}`),
  setDefaultLLMConfig: (u, id) => request('PUT', `${llm(u)}/default/${enc(id)}`, { body: {} }),
};

function enc(s) {
  return encodeURIComponent(String(s));
}

function chat(projectId) {
  return `/v3/projects/${enc(projectId)}/chat`;
}

function llm(userId) {
  return `/v3/access/users/${enc(userId)}/llm-model-configs`;
}
