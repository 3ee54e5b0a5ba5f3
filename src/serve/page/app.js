// The chat page of `mcp-turns serve`: one ES module, no dependencies, no build step.
// Every text from the server or the user reaches the page through textContent or text nodes, never innerHTML.

const TOKEN_KEY = 'mcp-turns:token';
// Conversations seen in this browser and their first questions: one list per signed-in identity,
// kept under `<key>:<identity>` (see useIdentity).
const LOCAL_KEY = 'mcp-turns:conversations';
const TITLES_KEY = 'mcp-turns:titles';
const LOCAL_LIMIT = 200;
const LIST_REFRESH_MS = 15000;
const CONVERSATION_POLL_MS = 4000;
const HISTORY_CONCURRENCY = 4;

// ---------------------------------------------------------------------------------------------
// Small DOM helpers

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') el.className = value;
      else if (key === 'text') el.textContent = value;
      else if (key === 'dataset') Object.assign(el.dataset, value);
      else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
      else if (key in el && typeof value !== 'string') el[key] = value;
      else el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

const $ = (selector, root = document) => root.querySelector(selector);
const enc = encodeURIComponent;

function randomHex(bytes) {
  const a = new Uint8Array(bytes);
  crypto.getRandomValues(a);
  return Array.from(a, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** `<kind>-<time-sortable id>`, as the CLI makes them (src/client/ids.ts). */
function newId(kind) {
  return `${kind}-${Date.now().toString(36).padStart(9, '0')}-${randomHex(5)}`;
}

// ---------------------------------------------------------------------------------------------
// Formatting

const numberFormat = new Intl.NumberFormat('en-US');

function formatTokens(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '0';
  if (n >= 100000) return `${Math.round(n / 1000)}k`;
  if (n >= 10000) return `${(n / 1000).toFixed(1)}k`;
  return numberFormat.format(n);
}

function formatCost(usd) {
  if (typeof usd !== 'number' || !Number.isFinite(usd)) return '';
  if (usd === 0) return '$0';
  if (usd < 0.0001) return '<$0.0001';
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}

function formatDuration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60000);
  const seconds = Math.round((ms % 60000) / 1000);
  if (minutes >= 60) return `${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`;
}

function formatBytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function relativeTime(value) {
  const t = typeof value === 'number' ? value : Date.parse(value);
  if (!Number.isFinite(t)) return '';
  const diff = Date.now() - t;
  if (diff < 45000) return 'just now';
  if (diff < 3600000) return `${Math.max(1, Math.round(diff / 60000))} min ago`;
  if (diff < 86400000) return `${Math.round(diff / 3600000)} h ago`;
  if (diff < 2 * 86400000) return 'yesterday';
  const d = new Date(t);
  const sameYear = d.getFullYear() === new Date().getFullYear();
  return d.toLocaleDateString(
    'en-US',
    sameYear ? { month: 'short', day: 'numeric' } : { year: 'numeric', month: 'short', day: 'numeric' },
  );
}

// Statuses are the server's one vocabulary (src/core/run-status.ts): lower case, `_` between words.
const STATUS_LABELS = {
  running: 'Running',
  waiting_approval: 'Waiting for approval',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
  terminated: 'Terminated',
  timed_out: 'Timed out',
  continued_as_new: 'Continued',
};

/** The ends a conversation's sidebar item is flagged with. */
const PROBLEM_STATUSES = ['failed', 'cancelled', 'terminated', 'timed_out'];

function normalizeStatus(status) {
  return String(status ?? '');
}

function statusLabel(status) {
  const s = normalizeStatus(status);
  return STATUS_LABELS[s] ?? (s ? s[0].toUpperCase() + s.slice(1).replace(/_/g, ' ') : '');
}

const STOP_REASON_LABELS = {
  max_steps: 'Stopped: step limit reached',
  max_tool_calls: 'Stopped: tool call limit reached',
  max_tokens: 'Stopped: token budget reached',
  repeated_call: 'Stopped: repeated tool call',
  refusal: 'Claude declined',
  stop_sequence: 'Stopped at a stop sequence: the answer may be cut',
  invalid_output: 'The answer does not match the schema',
};

function stopReasonLabel(reason) {
  if (!reason || reason === 'completed') return '';
  return STOP_REASON_LABELS[reason] ?? `Stopped: ${String(reason).replace(/_/g, ' ')}`;
}

function prettyJson(value) {
  if (value === undefined) return '';
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

function jsonPreview(value, max = 96) {
  let text;
  try {
    text = JSON.stringify(value) ?? '';
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A tool's output as text, pretty-printed when it is a whole JSON object or array. */
function prettyOutput(text) {
  const trimmed = text.trim();
  if (
    (trimmed.startsWith('{') && trimmed.endsWith('}')) ||
    (trimmed.startsWith('[') && trimmed.endsWith(']'))
  ) {
    try {
      return JSON.stringify(JSON.parse(trimmed), null, 2);
    } catch {
      /* not JSON: as written */
    }
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// Minimal, safe markdown: paragraphs, line breaks, headings, lists, quotes, fenced code, inline
// code, bold, italic and links. Builds DOM nodes only.

const SAFE_LINK = /^(https?:|mailto:)/i;

function renderInline(text, ctx) {
  const out = [];
  const pattern =
    /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([\s\S]+?)\*\*|__([\s\S]+?)__|\[([^\]\n]+)\]\(([^()\s]+)\)|(^|[^\w*])\*(?=\S)([^*\n]+?)\*(?![\w*])|(^|[^\w])_(?=\S)([^_\n]+?)_(?!\w)/g;
  let last = 0;
  let m;
  while ((m = pattern.exec(text)) !== null) {
    const lead = m[7] ?? m[9] ?? '';
    const start = m.index + lead.length;
    if (start > last) out.push(document.createTextNode(text.slice(last, start)));
    if (m[1] !== undefined) {
      out.push(h('code', null, m[2].replace(/^ (.*) $/, '$1')));
    } else if (m[3] !== undefined || m[4] !== undefined) {
      out.push(h('strong', null, renderInline(m[3] ?? m[4], ctx)));
    } else if (m[5] !== undefined) {
      out.push(renderLink(m[5], m[6], ctx));
    } else if (m[8] !== undefined) {
      out.push(h('em', null, renderInline(m[8], ctx)));
    } else if (m[10] !== undefined) {
      out.push(h('em', null, renderInline(m[10], ctx)));
    }
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
  return out;
}

function renderLink(label, href, ctx) {
  const artifact = /^#artifact-(.+)$/.exec(href);
  if (artifact) {
    const title = label.replace(/^artifact:\s*/i, '');
    return h(
      'a',
      {
        class: 'artifact-ref',
        href: '#',
        onclick: (e) => {
          e.preventDefault();
          ctx?.onArtifact?.(artifact[1]);
        },
      },
      h('span', { class: 'artifact-ref-icon', 'aria-hidden': 'true' }, '◇'),
      title,
    );
  }
  if (SAFE_LINK.test(href)) {
    return h('a', { href, target: '_blank', rel: 'noopener noreferrer' }, renderInline(label, ctx));
  }
  return document.createTextNode(label);
}

function appendLines(parent, lines, ctx) {
  lines.forEach((line, i) => {
    if (i > 0) parent.append(h('br'));
    parent.append(...renderInline(line, ctx));
  });
}

function renderMarkdown(text, ctx) {
  const frag = document.createDocumentFragment();
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  const isBlank = (l) => /^\s*$/.test(l);
  const fence = /^\s*(```+|~~~+)\s*([\w+.#-]*)\s*$/;
  const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  const bullet = /^(\s*)([-*+])\s+(.*)$/;
  const ordered = /^(\s*)(\d{1,9})[.)]\s+(.*)$/;
  const quote = /^\s{0,3}>\s?(.*)$/;
  const rule = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;

  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      i++;
      continue;
    }
    const f = fence.exec(line);
    if (f) {
      const body = [];
      i++;
      while (
        i < lines.length &&
        !new RegExp(`^\\s*${f[1][0] === '`' ? '`' : '~'}{${f[1].length},}\\s*$`).test(lines[i])
      )
        body.push(lines[i++]);
      i++;
      const pre = h('pre', { class: 'code-block' }, h('code', null, body.join('\n')));
      if (f[2]) pre.dataset.lang = f[2];
      frag.append(pre);
      continue;
    }
    const hd = heading.exec(line);
    if (hd) {
      const level = Math.min(6, hd[1].length + 2);
      frag.append(h(`h${level}`, { class: 'md-heading' }, renderInline(hd[2], ctx)));
      i++;
      continue;
    }
    if (rule.test(line)) {
      frag.append(h('hr'));
      i++;
      continue;
    }
    if (quote.test(line)) {
      const body = [];
      while (i < lines.length && quote.test(lines[i])) body.push(quote.exec(lines[i++])[1]);
      const bq = h('blockquote');
      bq.append(renderMarkdown(body.join('\n'), ctx));
      frag.append(bq);
      continue;
    }
    if (bullet.test(line) || ordered.test(line)) {
      const isOrdered = !bullet.test(line);
      const re = isOrdered ? ordered : bullet;
      const first = re.exec(line);
      const list = h(isOrdered ? 'ol' : 'ul');
      if (isOrdered && first[2] !== '1') list.setAttribute('start', String(Number(first[2])));
      let item = null;
      let itemLines = [];
      const flush = () => {
        if (item) {
          appendLines(item, itemLines, ctx);
          list.append(item);
        }
      };
      while (i < lines.length) {
        const l = lines[i];
        const m = re.exec(l);
        if (m) {
          flush();
          item = h('li');
          itemLines = [m[3]];
          i++;
        } else if (!isBlank(l) && /^\s{2,}\S/.test(l) && item) {
          const nested = bullet.exec(l) ?? ordered.exec(l);
          itemLines.push(nested ? `${bullet.test(l) ? '•' : `${nested[2]}.`} ${nested[3]}` : l.trim());
          i++;
        } else if (isBlank(l) && i + 1 < lines.length && re.test(lines[i + 1])) {
          i++;
        } else break;
      }
      flush();
      frag.append(list);
      continue;
    }
    const para = [];
    while (
      i < lines.length &&
      !isBlank(lines[i]) &&
      !fence.test(lines[i]) &&
      !heading.test(lines[i]) &&
      !(para.length > 0 && (bullet.test(lines[i]) || ordered.test(lines[i]) || quote.test(lines[i])))
    ) {
      para.push(lines[i++]);
    }
    const p = h('p');
    appendLines(p, para, ctx);
    frag.append(p);
  }
  return frag;
}

// ---------------------------------------------------------------------------------------------
// Server access

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

const auth = {
  token: localStorage.getItem(TOKEN_KEY) ?? '',
  waiters: [],
};

function authHeaders(extra) {
  const headers = { ...(extra ?? {}) };
  if (auth.token) headers.Authorization = `Bearer ${auth.token}`;
  return headers;
}

async function errorOf(res) {
  let message = `${res.status} ${res.statusText}`.trim();
  try {
    const text = await res.text();
    try {
      const body = JSON.parse(text);
      if (body && typeof body.error === 'string') message = body.error;
    } catch {
      if (text && text.length < 300) message = text.trim();
    }
  } catch {
    /* the status line is all there is */
  }
  return new ApiError(res.status, message);
}

/** A request to the server; a 401 asks for a token and then tries again. */
async function request(path, { method = 'GET', body, headers, signal } = {}) {
  for (;;) {
    const init = { method, headers: authHeaders(headers), signal };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers['Content-Type'] = 'application/json';
    }
    const res = await fetch(path, init);
    if (res.status !== 401) return res;
    const err = await errorOf(res);
    await needSignIn(auth.token ? `The token was not accepted: ${err.message}` : '');
    if (signal?.aborted) throw new DOMException('Aborted', 'AbortError');
  }
}

async function requestJson(path, options) {
  const res = await request(path, options);
  if (!res.ok) throw await errorOf(res);
  return res.json();
}

// ---------------------------------------------------------------------------------------------
// Server-sent events over fetch (so the Authorization header goes along)

async function* readSse(response, signal) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let id = null;
  let data = [];
  const onAbort = () => reader.cancel().catch(() => {});
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        let line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') {
          if (data.length > 0) yield { id, data: data.join('\n') };
          id = null;
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let val = colon < 0 ? '' : line.slice(colon + 1);
        if (val.startsWith(' ')) val = val.slice(1);
        if (field === 'data') data.push(val);
        else if (field === 'id') id = val;
      }
    }
    if (data.length > 0) yield { id, data: data.join('\n') };
  } finally {
    signal?.removeEventListener('abort', onAbort);
    reader.releaseLock?.();
  }
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/**
 * Reads a turn's stream until its `finish`, reconnecting with Last-Event-ID when it drops.
 * `open(lastId)` opens the stream (lastId: the last offset seen, or null).
 */
async function followStream({ open, onEvent, signal, onReconnecting }) {
  let lastId = null;
  let failures = 0;
  while (!signal.aborted) {
    let res;
    try {
      res = await open(lastId);
    } catch (err) {
      if (signal.aborted) return;
      failures++;
      onReconnecting?.(true);
      await sleep(Math.min(8000, 500 * 2 ** Math.min(failures, 4)), signal);
      continue;
    }
    if (!res.ok) {
      const err = await errorOf(res);
      if (res.status >= 500 && failures < 6) {
        failures++;
        onReconnecting?.(true);
        await sleep(Math.min(8000, 500 * 2 ** failures), signal);
        continue;
      }
      throw err;
    }
    let finished = false;
    try {
      for await (const message of readSse(res, signal)) {
        let event;
        try {
          event = JSON.parse(message.data);
        } catch {
          continue;
        }
        const offset =
          message.id !== null && message.id !== '' && Number.isFinite(Number(message.id))
            ? Number(message.id)
            : event.offset;
        if (typeof offset === 'number') lastId = offset;
        failures = 0;
        onReconnecting?.(false);
        onEvent(event);
        if (event.type === 'finish') finished = true;
      }
    } catch (err) {
      if (signal.aborted) return;
      /* the connection dropped: reconnect below */
    }
    if (finished || signal.aborted) return;
    failures++;
    onReconnecting?.(true);
    await sleep(Math.min(8000, 300 * 2 ** Math.min(failures, 4)), signal);
  }
}

// ---------------------------------------------------------------------------------------------
// App state

const ui = {
  app: $('#app'),
  list: $('#conversation-list'),
  newChat: $('#new-chat'),
  messages: $('#messages'),
  host: $('#thread-host'),
  composer: $('#composer'),
  form: $('#composer-form'),
  send: $('#send'),
  title: $('#conversation-title'),
  convId: $('#conversation-id'),
  convStatus: $('#conversation-status'),
  convTurns: $('#conversation-turns'),
  convLink: $('#conversation-temporal-link'),
  banner: $('#banner'),
  version: $('#version'),
  connection: $('#connection'),
  connectionText: $('#connection-text'),
  signOut: $('#sign-out'),
  account: $('#account'),
  accountWho: $('#account-who'),
  accountAvatar: $('#account-avatar'),
  accountName: $('#account-name'),
  accountAdmin: $('#account-admin'),
  convOwner: $('#conversation-owner'),
  signin: $('#signin'),
  signinForm: $('#signin-form'),
  tokenInput: $('#token-input'),
  signinError: $('#signin-error'),
};

const app = {
  info: null,
  /** Who the server says is signed in (`caller` of /v1/info): { name, admin, issuer? }. */
  caller: null,
  /** The key of the local lists: the caller's identity, set once it is known. */
  identity: null,
  serverConversations: [],
  listLoaded: false,
  current: null,
  listTimer: 0,
};

/**
 * The identity the server names (a token's name, or a JWT's subject with its issuer): the local
 * lists are kept per identity, so signing in as someone else in this browser shows none of the
 * first one's conversations. A server that names no caller has no owners: everyone sees everything.
 */
function identityOf(caller) {
  if (!caller || typeof caller.name !== 'string') return 'anonymous';
  return caller.issuer ? `jwt:${caller.issuer}:${caller.name}` : `token:${caller.name}`;
}

const localKey = (identity) => `${LOCAL_KEY}:${identity}`;
const titlesKey = (identity) => `${TITLES_KEY}:${identity}`;

function readJson(key, fallback) {
  try {
    const value = JSON.parse(localStorage.getItem(key) ?? 'null');
    return value ?? fallback;
  } catch {
    return fallback;
  }
}

function writeJson(key, value) {
  if (!app.identity) return; // whose it would be is not known yet: it lives until reload
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    /* storage full or disabled: the list lives until reload */
  }
}

function loadLocal(identity) {
  const list = readJson(localKey(identity), []);
  return Array.isArray(list) ? list.filter((c) => c && typeof c.id === 'string') : [];
}

function saveLocal(list) {
  writeJson(localKey(app.identity), list.slice(0, LOCAL_LIMIT));
}

/** Conversations seen here by the signed-in identity (empty until it is known). */
let localConversations = [];

/** First questions of conversations seen here, as their titles when the server has no summary. */
let titles = {};

/**
 * Reads the local lists of `caller`'s identity, keeping what this page noted before it knew who
 * was signed in (a chat it made meanwhile). The one list earlier pages kept for whoever signed in
 * (the unkeyed `mcp-turns:conversations` and `mcp-turns:titles`) is nobody's known: it goes.
 */
function useIdentity(caller) {
  app.caller = caller && typeof caller.name === 'string' ? caller : null;
  app.identity = identityOf(app.caller);
  try {
    localStorage.removeItem(LOCAL_KEY);
    localStorage.removeItem(TITLES_KEY);
  } catch {
    /* storage disabled */
  }
  const noted = localConversations;
  localConversations = loadLocal(app.identity);
  for (const c of noted) if (!localEntry(c.id)) localConversations.unshift(c);
  const t = readJson(titlesKey(app.identity), {});
  titles = { ...(t && typeof t === 'object' && !Array.isArray(t) ? t : {}), ...titles };
  saveLocal(localConversations);
  writeJson(titlesKey(app.identity), titles);
}

/** Signing out: this identity's local lists go with its token (a shared browser keeps nothing of theirs). */
function forgetIdentity() {
  if (!app.identity) return;
  try {
    localStorage.removeItem(localKey(app.identity));
    localStorage.removeItem(titlesKey(app.identity));
  } catch {
    /* storage disabled */
  }
}

function titleOf(id) {
  return typeof titles[id] === 'string' ? titles[id] : '';
}

function rememberTitle(id, title) {
  if (titles[id] === title) return;
  delete titles[id];
  titles[id] = title;
  const ids = Object.keys(titles);
  if (ids.length > LOCAL_LIMIT) for (const old of ids.slice(0, ids.length - LOCAL_LIMIT)) delete titles[old];
  writeJson(titlesKey(app.identity), titles);
}

function localEntry(id) {
  return localConversations.find((c) => c.id === id);
}

function rememberConversation(id, patch = {}) {
  const existing = localEntry(id);
  if (existing) Object.assign(existing, patch);
  else localConversations.unshift({ id, createdAt: Date.now(), ...patch });
  saveLocal(localConversations);
}

/** A conversation the server does not know (or not for this caller): out of the local lists. */
function forgetConversation(id) {
  const before = localConversations.length;
  localConversations = localConversations.filter((c) => c.id !== id);
  if (localConversations.length !== before) saveLocal(localConversations);
  if (id in titles) {
    delete titles[id];
    writeJson(titlesKey(app.identity), titles);
  }
}

function isSummaryUseful(summary, id) {
  if (!summary || typeof summary !== 'string') return false;
  const s = summary.trim();
  return s !== '' && s !== id && s !== `conversation ${id}`;
}

function conversationTitle(id, serverItem) {
  if (isSummaryUseful(serverItem?.summary, id)) return serverItem.summary.trim();
  return titleOf(id) || 'Untitled conversation';
}

// ---------------------------------------------------------------------------------------------
// Sign-in

function needSignIn(message) {
  showSignIn(message);
  return new Promise((resolve) => auth.waiters.push(resolve));
}

function showSignIn(message) {
  ui.signin.hidden = false;
  ui.signinError.hidden = !message;
  ui.signinError.textContent = message || '';
  ui.tokenInput.value = '';
  setTimeout(() => ui.tokenInput.focus(), 0);
}

ui.signinForm.addEventListener('submit', async (e) => {
  e.preventDefault();
  const token = ui.tokenInput.value.trim();
  if (!token) {
    ui.signinError.hidden = false;
    ui.signinError.textContent = 'Enter a token.';
    return;
  }
  auth.token = token;
  localStorage.setItem(TOKEN_KEY, token);
  // Signed in again while the page was open (a token no longer accepted): under another identity,
  // nothing shown so far is theirs, so the page starts over as them.
  if (app.identity && app.info?.authRequired) {
    const info = await fetchInfo().catch(() => null);
    if (info?.caller && identityOf(info.caller) !== app.identity) {
      location.reload();
      return;
    }
  }
  ui.signin.hidden = true;
  ui.signOut.hidden = false;
  renderAccount();
  const waiters = auth.waiters.splice(0);
  for (const resolve of waiters) resolve();
});

ui.signOut.addEventListener('click', () => {
  forgetIdentity();
  auth.token = '';
  localStorage.removeItem(TOKEN_KEY);
  // The next one to sign in starts on a new chat, not on this one's conversation.
  location.replace(`${location.pathname}${location.search}`);
});

/** /v1/info as the signed-in caller (who they are, the servers), or the error it answered. */
async function fetchInfo() {
  const res = await fetch('v1/info', { headers: authHeaders() });
  if (!res.ok) throw await errorOf(res);
  return res.json();
}

/** Who is signed in, by the sign-out control: their name, "admin" marked, a JWT's issuer in the tooltip. */
function renderAccount() {
  const caller = app.caller;
  ui.accountWho.hidden = !caller;
  if (caller) {
    ui.accountName.textContent = caller.name;
    ui.accountAvatar.textContent = (caller.name.trim()[0] ?? '?').toUpperCase();
    ui.accountAdmin.hidden = !caller.admin;
    const issuer = caller.issuer ? ` (${caller.issuer})` : '';
    const admin = caller.admin ? " · admin: sees everyone's conversations" : '';
    ui.accountWho.title = `Signed in as ${caller.name}${issuer}${admin}`;
  }
  ui.account.hidden = ui.accountWho.hidden && ui.signOut.hidden;
}

// ---------------------------------------------------------------------------------------------
// Banner and connection state

function showBanner(message) {
  ui.banner.hidden = !message;
  ui.banner.textContent = message || '';
}

function setConnection(state, text) {
  ui.connection.dataset.state = state;
  ui.connectionText.textContent = text;
}

// ---------------------------------------------------------------------------------------------
// Sidebar

function renderConversationList() {
  const byId = new Map();
  for (const c of app.serverConversations)
    byId.set(c.id, { id: c.id, server: c, time: Date.parse(c.startTime) || 0 });
  for (const c of localConversations) {
    const existing = byId.get(c.id);
    if (existing) existing.local = c;
    else byId.set(c.id, { id: c.id, local: c, time: c.createdAt || 0 });
  }
  const selected = app.current?.id;
  if (selected && !byId.has(selected)) byId.set(selected, { id: selected, time: Date.now() });
  const items = [...byId.values()].sort((a, b) => b.time - a.time);

  const nodes = items.map((item) => {
    const status = item.server ? normalizeStatus(item.server.status) : item.local?.sent ? 'running' : 'new';
    const title = item.server || titleOf(item.id) ? conversationTitle(item.id, item.server) : 'New chat';
    const meta = [relativeTime(item.server?.startTime ?? item.local?.createdAt)];
    const problem = PROBLEM_STATUSES.includes(status);
    if (problem) meta.push(statusLabel(status).toLowerCase());
    // An admin sees everyone's: whose each is, as the server lists it.
    const owner = app.caller?.admin && item.server ? ownerChip(item.server.owner) : null;
    return h(
      'a',
      {
        class: `conversation-item${item.id === selected ? ' selected' : ''}`,
        href: `#c=${enc(item.id)}`,
        title: item.id,
        dataset: { conversationId: item.id, status },
        'aria-current': item.id === selected ? 'page' : undefined,
      },
      h(
        'span',
        { class: `conversation-text${problem ? ' problem' : ''}` },
        h('span', { class: 'conversation-title' }, title),
        h('span', { class: 'conversation-meta' }, owner, owner ? ' · ' : null, meta.filter(Boolean).join(' · ')),
      ),
    );
  });
  if (nodes.length === 0) {
    nodes.push(
      h('div', { class: 'conversation-empty' }, app.listLoaded ? 'No conversations yet' : 'Loading…'),
    );
  }
  ui.list.replaceChildren(...nodes);
  ui.list.setAttribute('aria-busy', String(!app.listLoaded));
}

/**
 * Whose a conversation is, for an admin: its owner's label (`alice`, `alice (issuer)`), or "no owner"
 * for one started outside serve (the CLI, the client API), which only admins see.
 */
function ownerChip(owner) {
  const known = typeof owner === 'string' && owner !== '';
  return h(
    'span',
    {
      class: `conversation-owner${known ? '' : ' unowned'}`,
      title: known ? `${owner}'s conversation` : 'Started outside serve (the CLI or the client API): no owner, only admins see it',
    },
    known ? owner : 'no owner',
  );
}

async function refreshConversationList() {
  clearTimeout(app.listTimer);
  try {
    const body = await requestJson('v1/conversations?limit=50');
    app.serverConversations = Array.isArray(body.conversations) ? body.conversations : [];
    app.listLoaded = true;
    setConnection('ok', app.info ? `${app.info.namespace}` : 'Connected');
  } catch (err) {
    app.listLoaded = true;
    setConnection('error', 'Server unreachable');
  }
  renderConversationList();
  updateHeader();
  app.listTimer = setTimeout(refreshConversationList, LIST_REFRESH_MS);
  if (app.listLoaded) checkLocalConversations();
}

/** Local conversations asked about this page's life, found or dropped. */
const checkedLocal = new Set();
let checkingLocal = false;

/**
 * The server lists the newest conversations only, and visibility lags: a sent conversation of the
 * local list that it does not list is asked about once; one it answers 404 for (gone, or not this
 * caller's) leaves the sidebar. The open one is the conversation view's to ask (its load).
 */
async function checkLocalConversations() {
  if (checkingLocal) return;
  checkingLocal = true;
  try {
    const listed = new Set(app.serverConversations.map((c) => c.id));
    const unlisted = localConversations.filter(
      (c) =>
        c.sent &&
        !listed.has(c.id) &&
        !checkedLocal.has(c.id) &&
        c.id !== app.current?.id &&
        Date.now() - (c.sentAt ?? 0) > 60000,
    );
    for (const c of unlisted) {
      let res;
      try {
        res = await request(`v1/conversations/${enc(c.id)}`);
      } catch {
        return; // the server is away: next refresh
      }
      if (res.status === 404) {
        forgetConversation(c.id);
        renderConversationList();
      }
      if (res.ok || res.status === 404) checkedLocal.add(c.id);
      await res.body?.cancel().catch(() => {});
    }
  } finally {
    checkingLocal = false;
  }
}

function refreshListSoon() {
  setTimeout(refreshConversationList, 1500);
  setTimeout(refreshConversationList, 6000);
}

// ---------------------------------------------------------------------------------------------
// Scrolling: stay at the bottom while new content arrives, unless the reader scrolled up.

let stickToBottom = true;
let scrollScheduled = false;
let userScrollAt = 0;

// Only the reader's own scrolling lets go of the bottom: content that grows or shrinks scrolls too.
const noteUserScroll = () => {
  userScrollAt = Date.now();
};
ui.messages.addEventListener('wheel', noteUserScroll, { passive: true });
ui.messages.addEventListener('touchmove', noteUserScroll, { passive: true });
ui.messages.addEventListener('pointerdown', (e) => {
  if (e.target === ui.messages) noteUserScroll(); // the scrollbar
});
ui.messages.addEventListener('keydown', (e) => {
  if (
    !/^(INPUT|TEXTAREA)$/.test(e.target.tagName) &&
    /^(PageUp|PageDown|ArrowUp|ArrowDown|Home|End| )$/.test(e.key)
  )
    noteUserScroll();
});

ui.messages.addEventListener('scroll', () => {
  const { scrollTop, scrollHeight, clientHeight } = ui.messages;
  if (scrollHeight - scrollTop - clientHeight < 120) stickToBottom = true;
  else if (Date.now() - userScrollAt < 1000) stickToBottom = false;
});

function scheduleScroll(force = false) {
  if (force) stickToBottom = true;
  if (scrollScheduled) return;
  scrollScheduled = true;
  requestAnimationFrame(() => {
    scrollScheduled = false;
    if (stickToBottom) ui.messages.scrollTop = ui.messages.scrollHeight;
  });
}

// ---------------------------------------------------------------------------------------------
// Batched rendering of streamed text

const dirtyTexts = new Set();
let textFrame = 0;

function markDirty(block) {
  dirtyTexts.add(block);
  if (!textFrame) {
    textFrame = requestAnimationFrame(() => {
      textFrame = 0;
      const blocks = [...dirtyTexts];
      dirtyTexts.clear();
      for (const b of blocks) b.render();
      scheduleScroll();
    });
  }
}

class TextBlock {
  constructor(el, { markdown, ctx }) {
    this.el = el;
    this.text = '';
    this.markdown = markdown;
    this.ctx = ctx;
  }
  append(delta) {
    this.text += delta;
    markDirty(this);
  }
  set(text) {
    this.text = text;
    markDirty(this);
  }
  render() {
    if (this.markdown) this.el.replaceChildren(renderMarkdown(this.text, this.ctx));
    else this.el.textContent = this.text;
    this.el.classList.toggle('empty', this.text.trim() === '');
  }
}

// ---------------------------------------------------------------------------------------------
// A turn

const FINAL_STATUSES = new Set([
  'completed',
  'failed',
  'cancelled',
  'terminated',
  'timed_out',
  'unavailable',
]);

class TurnView {
  constructor(conversation, { turnId, question } = {}) {
    this.conversation = conversation;
    this.turnId = null;
    this.status = 'pending';
    this.texts = new Map();
    this.tools = new Map();
    this.lastOffset = -1;
    this.userRendered = false;
    this.hasAnswerText = false;
    this.toolCount = 0;
    this.abort = new AbortController();
    conversation.abort.signal.addEventListener('abort', () => this.abort.abort(), { once: true });

    this.userRow = h('div', { class: 'msg-row user-row', hidden: true });
    // What the turn offered Claude (its data-tools event): a collapsed line, open to the lists.
    this.toolsEl = h('details', { class: 'turn-tools', hidden: true });
    this.activity = h('div', { class: 'activity' });
    this.answerEl = h('div', { class: 'answer markdown empty' });
    this.answer = new TextBlock(this.answerEl, {
      markdown: true,
      ctx: { onArtifact: (id) => this.scrollToArtifact(id) },
    });
    // A turn with output: the answer's object (its data-output events), growing while partial.
    this.outputEl = h('pre', { class: 'turn-output', hidden: true });
    this.artifactsEl = h('div', { class: 'artifacts', hidden: true });
    this.errorEl = h('div', { class: 'turn-error', role: 'alert', hidden: true });
    this.workingLabel = h('span', { class: 'working-label' }, 'Sending…');
    this.working = h(
      'div',
      { class: 'working' },
      h('span', { class: 'working-dots', 'aria-hidden': 'true' }, h('i'), h('i'), h('i')),
      this.workingLabel,
    );
    this.statusChip = h('span', { class: 'turn-chip', hidden: true });
    this.metaInfo = h('span', { class: 'turn-usage' });
    this.link = h(
      'a',
      { class: 'temporal-link', target: '_blank', rel: 'noopener noreferrer', hidden: true },
      'Temporal UI ↗',
    );
    this.meta = h('div', { class: 'turn-meta' }, this.statusChip, this.metaInfo, this.link);

    this.el = h(
      'section',
      { class: 'turn', dataset: { status: 'pending' } },
      this.userRow,
      h(
        'div',
        { class: 'msg-row assistant-row' },
        h('div', { class: 'avatar', 'aria-hidden': 'true' }, 'M'),
        h(
          'div',
          { class: 'assistant-body' },
          this.toolsEl,
          this.activity,
          this.answerEl,
          this.outputEl,
          this.artifactsEl,
          this.errorEl,
          this.working,
          this.meta,
        ),
      ),
    );
    if (question !== undefined) this.setQuestion(question);
    if (turnId) this.setTurnId(turnId);
  }

  setQuestion(text) {
    this.userRendered = true;
    this.userRow.hidden = false;
    const bubble = h('div', { class: 'user-bubble' });
    bubble.textContent = text;
    this.userRow.replaceChildren(bubble);
    this.conversation.noteQuestion(this, text);
  }

  setTurnId(turnId) {
    this.turnId = turnId;
    this.el.dataset.turnId = turnId;
    const info = app.info;
    if (info?.uiUrl && info?.namespace) {
      this.link.href = `${info.uiUrl.replace(/\/+$/, '')}/namespaces/${enc(info.namespace)}/workflows/${enc(turnId)}`;
      this.link.title = `Open ${turnId} in the Temporal UI`;
      this.link.hidden = false;
    }
  }

  setStatus(status) {
    this.status = status;
    this.el.dataset.status = status;
    const done = FINAL_STATUSES.has(status);
    this.working.hidden = done;
    this.answerEl.classList.toggle('streaming', !done && this.hasAnswerText);
    if (done) {
      for (const card of this.tools.values()) card.settle(status);
      this.conversation.turnSettled(this);
    }
    this.updateMeta();
  }

  setWorking(label) {
    this.workingLabel.textContent = label;
  }

  /** The phase the turn is in, for the working indicator. */
  refreshWorking() {
    if (FINAL_STATUSES.has(this.status)) return;
    const cards = [...this.tools.values()];
    const waiting = cards.find((c) => c.state === 'waiting');
    const asking = cards.find((c) => c.state === 'input');
    const running = cards.filter((c) => c.state === 'running');
    if (waiting) this.setWorking(`Paused until someone approves or denies ${waiting.displayName}`);
    else if (asking) this.setWorking(`Paused until someone answers ${asking.displayName}`);
    else if (running.length === 1) this.setWorking(`Running ${running[0].displayName}…`);
    else if (running.length > 1) this.setWorking(`Running ${running.length} tools…`);
    else if (this.hasAnswerText) this.setWorking('Writing the answer…');
    else if (this.status === 'pending')
      this.setWorking(this.queued ? 'Queued behind the running turn…' : 'Sending…');
    else this.setWorking('Thinking…');
    this.working.dataset.phase = waiting || asking ? 'waiting' : 'busy';
  }

  textBlock(id) {
    let block = this.texts.get(id);
    if (block) return block;
    if (id === 'answer') {
      block = this.answer;
    } else if (id.startsWith('reasoning-')) {
      const body = h('div', { class: 'reasoning-text' });
      const el = h('details', { class: 'reasoning' }, h('summary', null, 'Thinking'), body);
      this.activity.append(el);
      block = new TextBlock(body, { markdown: false });
      block.container = el;
    } else {
      const el = h('div', { class: 'step-text markdown empty' });
      this.activity.append(el);
      block = new TextBlock(el, { markdown: true });
    }
    this.texts.set(id, block);
    return block;
  }

  /** The card of the event's tool call, made (with what the event knows) when the call is new here. */
  toolCard(event) {
    let card = this.tools.get(event.toolCallId);
    if (!card) {
      card = new ToolCard(this, event);
      this.tools.set(event.toolCallId, card);
      this.activity.append(card.el);
      this.toolCount++;
    }
    return card;
  }

  handle(event) {
    if (!event || typeof event !== 'object') return;
    if (typeof event.offset === 'number') {
      if (event.offset <= this.lastOffset) return;
      this.lastOffset = event.offset;
    }
    if (event.turnId && !this.turnId) this.setTurnId(event.turnId);
    if (this.status === 'pending' && event.type !== 'finish') this.setStatus('running');

    switch (event.type) {
      case 'start':
        if (!this.userRendered && typeof event.question === 'string') this.setQuestion(event.question);
        break;
      case 'data-tools':
        this.showTools(event);
        break;
      case 'start-step':
        break;
      case 'text-delta': {
        const block = this.textBlock(event.id);
        block.append(event.delta ?? '');
        if (event.id === 'answer') {
          this.hasAnswerText = true;
          this.answerEl.classList.add('streaming');
        }
        break;
      }
      case 'reasoning-delta':
        this.textBlock(event.id).append(event.delta ?? '');
        break;
      case 'data-retry': {
        for (const id of event.discard ?? []) {
          const block = this.texts.get(id);
          if (!block) continue;
          block.set('');
          if (id === 'answer') this.hasAnswerText = false;
        }
        if ((event.discard ?? []).includes('answer')) this.showOutput(undefined);
        if (event.reason) {
          this.activity.append(
            h(
              'div',
              { class: 'turn-note' },
              h('span', { class: 'note-icon', 'aria-hidden': 'true' }, '↻'),
              `Retrying${event.attempt ? ` (attempt ${event.attempt})` : ''}: ${event.reason}`,
            ),
          );
        }
        break;
      }
      case 'data-compaction':
        this.activity.append(
          h(
            'div',
            { class: 'turn-note' },
            h('span', { class: 'note-icon', 'aria-hidden': 'true' }, '⇣'),
            `Compacted earlier history${event.reason ? `: ${event.reason}` : ''}`,
          ),
        );
        break;
      case 'tool-input-available': {
        const card = this.toolCard(event);
        if (card.input === undefined) card.setInput(event.input);
        break;
      }
      case 'data-approval':
        this.toolCard(event).approval(event);
        break;
      case 'data-input':
        this.toolCard(event).inputRound(event);
        break;
      case 'tool-output-available':
        this.toolCard(event).output(event);
        break;
      case 'finish-step':
        break;
      case 'data-output':
        this.showOutput(event.output, event.partial === true);
        break;
      case 'data-answer': {
        const response = event.response ?? {};
        if (this.answer.text.trim() === '' && typeof response.conversation === 'string') {
          this.answer.set(response.conversation);
          this.hasAnswerText = response.conversation.trim() !== '';
        }
        this.renderArtifacts(Array.isArray(response.artifacts) ? response.artifacts : []);
        if (
          typeof response.thinking === 'string' &&
          response.thinking.trim() &&
          !this.texts.has('thinking')
        ) {
          const body = h('div', { class: 'reasoning-text' }, response.thinking);
          this.activity.append(h('details', { class: 'reasoning' }, h('summary', null, 'Thinking'), body));
          this.texts.set('thinking', null);
        }
        break;
      }
      case 'error':
        this.showError(event.errorText ?? 'The turn failed.');
        break;
      case 'finish':
        this.finish = event;
        // No object matched the schema: the answer's text (what the model wrote) is what there is.
        if (event.stopReason === 'invalid_output') this.showOutput(undefined);
        this.setStatus(event.status || 'completed');
        break;
      default:
        break;
    }
    this.refreshWorking();
    this.updateMeta();
    scheduleScroll();
  }

  /** The answer's object as pretty JSON in place of the answer's text, the same JSON as written (none: the text again). */
  showOutput(output, partial = false) {
    this.outputEl.hidden = output === undefined;
    this.answerEl.hidden = output !== undefined;
    this.outputEl.textContent = output === undefined ? '' : JSON.stringify(output, null, 2);
    this.outputEl.classList.toggle('partial', partial);
  }

  /** The turn's tools line: what was offered (by server), deferred, dropped (why) and unavailable (why). */
  showTools(event) {
    const list = (value) => (Array.isArray(value) ? value : []);
    const offered = list(event.offered);
    const deferred = new Set(list(event.deferred));
    const dropped = list(event.dropped);
    const unavailable = list(event.unavailable);
    const counts = [`${offered.length} tool${offered.length === 1 ? '' : 's'} offered`];
    if (deferred.size) counts.push(`${deferred.size} deferred`);
    if (dropped.length) counts.push(`${dropped.length} dropped`);
    if (unavailable.length) counts.push(`${unavailable.length} unavailable`);

    // Offered tools by server (Claude's own tools under "Claude"), each by its own name.
    const groups = new Map();
    for (const t of offered) {
      const server = t.server ?? 'Claude';
      if (!groups.has(server)) groups.set(server, []);
      groups.get(server).push(t);
    }
    const section = (label, rows) =>
      rows.length ? h('div', { class: 'tools-section' }, h('div', { class: 'tools-label' }, label), h('ul', { class: 'tools-list' }, rows)) : null;
    const offeredRows = [...groups].map(([server, tools]) =>
      h(
        'li',
        null,
        h('span', { class: 'tools-server' }, server),
        h(
          'span',
          { class: 'tools-names' },
          tools.map((t, i) => [
            i ? ', ' : '',
            h('code', { title: t.name }, t.tool ?? t.name),
            deferred.has(t.name) ? h('span', { class: 'tools-flag' }, ' deferred') : null,
          ]),
        ),
      ),
    );
    const reasonRows = (items, nameOf) =>
      items.map((item) =>
        h('li', null, h('code', { class: 'tools-server' }, nameOf(item)), h('span', { class: 'tools-reason' }, String(item.reason ?? ''))),
      );
    this.toolsEl.dataset.tone = unavailable.length ? 'warn' : '';
    this.toolsEl.replaceChildren(
      h(
        'summary',
        null,
        h('span', { class: 'note-icon', 'aria-hidden': 'true' }, '⚒'),
        h('span', { class: 'tools-summary' }, counts.join(' · ')),
      ),
      h(
        'div',
        { class: 'tools-body' },
        section('Offered', offeredRows),
        section('Dropped', reasonRows(dropped, (d) => d.name)),
        section('Unavailable', reasonRows(unavailable, (u) => u.server)),
      ),
    );
    this.toolsEl.hidden = false;
  }

  showError(text) {
    this.errorEl.hidden = false;
    this.errorEl.replaceChildren(
      h('span', { class: 'error-icon', 'aria-hidden': 'true' }, '!'),
      h('span', null, text),
    );
  }

  updateMeta() {
    const parts = [];
    const f = this.finish;
    if (this.toolCount > 0) parts.push(`${this.toolCount} tool call${this.toolCount === 1 ? '' : 's'}`);
    if (f?.usage) {
      const u = f.usage;
      const input = (u.inputTokens ?? 0) + (u.cacheReadInputTokens ?? 0) + (u.cacheCreationInputTokens ?? 0);
      const cached = u.cacheReadInputTokens ?? 0;
      parts.push(
        `${formatTokens(input)} in${cached > 0 ? ` (${formatTokens(cached)} cached)` : ''} · ${formatTokens(u.outputTokens ?? 0)} out`,
      );
    }
    if (typeof f?.costUsd === 'number')
      // Code execution is billed by container time, which usage does not report.
      parts.push(formatCost(f.costUsd) + (f.usage?.codeExecutions ? ' + code execution time' : ''));
    this.metaInfo.textContent = parts.join(' · ');
    this.metaInfo.title = f?.usage ? usageTitle(f.usage) : '';

    let chip = '';
    let tone = '';
    if (this.status === 'running' || this.status === 'pending') chip = '';
    else if (this.status === 'completed') {
      chip = stopReasonLabel(f?.stopReason);
      tone = 'warn';
    } else if (this.status === 'unavailable') {
      chip = 'Events unavailable';
      tone = 'muted';
    } else if (this.status) {
      chip = statusLabel(this.status);
      tone = 'error';
    }
    this.statusChip.hidden = !chip;
    this.statusChip.textContent = chip;
    this.statusChip.dataset.tone = tone;
    this.meta.hidden = !chip && parts.length === 0 && this.link.hidden;
  }

  renderArtifacts(artifacts) {
    if (artifacts.length === 0) return;
    this.artifactsEl.hidden = false;
    this.artifactsEl.replaceChildren(
      ...artifacts.map((a) => {
        const card = h('div', { class: 'artifact', id: this.artifactDomId(a.id) });
        const head = h(
          'div',
          { class: 'artifact-head' },
          h('span', { class: 'artifact-icon', 'aria-hidden': 'true' }, '◇'),
          h('span', { class: 'artifact-title' }, a.title || a.id),
          h('span', { class: 'artifact-type' }, a.language || a.type || ''),
        );
        card.append(head);
        const imageType = /^image\/(png|jpe?g|gif|webp)$/i.test(a.type ?? '');
        const sources = a.type === 'application/vnd.bibliography' ? bibliographyOf(a.content) : null;
        if (imageType && typeof a.content === 'string' && /^[A-Za-z0-9+/=\s]+$/.test(a.content)) {
          card.append(
            h('img', {
              class: 'artifact-image',
              alt: a.title || 'image',
              src: `data:${a.type.toLowerCase()};base64,${a.content.replace(/\s/g, '')}`,
            }),
          );
        } else if (sources) {
          card.append(bibliographyList(sources));
        } else if (/markdown/i.test(a.type ?? '')) {
          const body = h('div', { class: 'artifact-body markdown' });
          body.append(renderMarkdown(String(a.content ?? ''), {}));
          card.append(body);
        } else {
          card.append(h('pre', { class: 'artifact-code' }, h('code', null, String(a.content ?? ''))));
        }
        return card;
      }),
    );
  }

  artifactDomId(id) {
    return `artifact-${this.turnId ?? 'pending'}-${id}`;
  }

  scrollToArtifact(id) {
    const el = document.getElementById(this.artifactDomId(id));
    if (!el) return;
    el.scrollIntoView({ behavior: 'smooth', block: 'center' });
    el.classList.add('flash');
    setTimeout(() => el.classList.remove('flash'), 1200);
  }

  /** Reads this turn's events from the start (or after the last offset seen). */
  async follow() {
    try {
      await followStream({
        signal: this.abort.signal,
        open: (lastId) =>
          request(`v1/turns/${enc(this.turnId)}/events`, {
            headers: {
              Accept: 'text/event-stream',
              ...(lastId !== null
                ? { 'Last-Event-ID': String(lastId) }
                : this.lastOffset >= 0
                  ? { 'Last-Event-ID': String(this.lastOffset) }
                  : {}),
            },
            signal: this.abort.signal,
          }),
        onEvent: (event) => this.handle(event),
        onReconnecting: (on) => this.el.classList.toggle('reconnecting', on),
      });
    } catch (err) {
      if (this.abort.signal.aborted) return;
      this.showError(err.message || String(err));
      this.setStatus(err.status === 404 ? 'unavailable' : 'failed');
    }
  }
}

function usageTitle(u) {
  return [
    `Input tokens: ${numberFormat.format(u.inputTokens ?? 0)}`,
    `Cache read: ${numberFormat.format(u.cacheReadInputTokens ?? 0)}`,
    `Cache write: ${numberFormat.format(u.cacheCreationInputTokens ?? 0)}` +
      (u.cacheCreation1hInputTokens ? ` (1h ${numberFormat.format(u.cacheCreation1hInputTokens)})` : ''),
    `Output tokens: ${numberFormat.format(u.outputTokens ?? 0)}`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// A tool call

const STATE_LABELS = {
  running: 'Running',
  waiting: 'Waiting for approval',
  input: 'Waiting for input',
  ok: 'Done',
  error: 'Error',
  denied: 'Denied',
};

/** The sources of a bibliography artifact (JSON: [{ url?, title, citedText: [] }]), or null when it is not that. */
function bibliographyOf(content) {
  try {
    const sources = JSON.parse(String(content ?? ''));
    return Array.isArray(sources) && sources.every((s) => s && typeof s.title === 'string') ? sources : null;
  } catch {
    return null;
  }
}

/** A numbered list of sources: each title a link (http(s) only), its quoted passages under it. */
function bibliographyList(sources) {
  return h(
    'ol',
    { class: 'artifact-body sources' },
    ...sources.map((s) =>
      h(
        'li',
        null,
        typeof s.url === 'string' && /^https?:\/\//i.test(s.url)
          ? h('a', { href: s.url, target: '_blank', rel: 'noopener noreferrer' }, s.title)
          : h('span', null, s.title),
        ...(Array.isArray(s.citedText) ? s.citedText.map((t) => h('blockquote', null, String(t))) : []),
      ),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// A server's questions (MCP elicitation): a form from the requested schema, or a URL to visit

/**
 * The blocks of a waiting round: what the server asks (its message above each question), the
 * questions' fields or links, Submit (Done for URL questions only) and Decline, and the line where
 * a refusal is said. `send(body, controls, message)` posts the answer. The form is `novalidate`:
 * the server checks the answer against the schema and says what it refuses, next to the form.
 */
function inputForm(event, send) {
  const requests = Array.isArray(event.requests) ? event.requests : [];
  const forms = requests.filter((r) => r && r.mode !== 'url');
  const timeout =
    typeof event.timeoutMs === 'number' && event.timeoutMs > 0
      ? ` · declined after ${formatDuration(event.timeoutMs)} without an answer`
      : '';
  const head = h(
    'div',
    { class: 'approval-text' },
    h('strong', null, event.round > 1 ? `The server asks again (round ${event.round})` : 'The server asks you'),
    h('span', null, `${event.tool || event.toolName || 'The tool'} needs your answer to go on${timeout}.`),
  );
  const collect = [];
  const sections = requests.map((r, i) => {
    const message = r.message ? h('p', { class: 'input-message' }, r.message) : null;
    if (r.mode === 'url') return h('div', { class: 'input-request', dataset: { mode: 'url' } }, message, urlQuestion(r));
    const fields = schemaFields(r.requestedSchema, `${event.toolCallId}-${event.round}-${i}`);
    collect.push([r.key, fields.collect]);
    return h('div', { class: 'input-request', dataset: { mode: 'form' } }, message, fields.el);
  });
  const message = h('div', { class: 'approval-message', role: 'status' });
  const submit = h('button', { type: 'submit', class: 'approve' }, forms.length ? 'Submit' : '✓ Done');
  const decline = h('button', { type: 'button', class: 'deny' }, 'Decline');
  const controls = () => [submit, decline, ...form.querySelectorAll('input, select, textarea')];
  const form = h(
    'form',
    { class: 'input-form', novalidate: true },
    head,
    ...sections,
    h('div', { class: 'approval-buttons input-buttons' }, submit, decline),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!forms.length) return send({ approved: true }, controls(), message);
    // One form: its content; several: each form's content by its key (src/core/input-requests.ts).
    const input =
      collect.length === 1 ? collect[0][1]() : Object.fromEntries(collect.map(([key, values]) => [key, values()]));
    send({ input }, controls(), message);
  });
  decline.addEventListener('click', () => send({ approved: false }, controls(), message));
  return [form, message];
}

/** A URL question: the URL as a link opened in a new tab (never followed by the page itself), http(s) only. */
function urlQuestion(request) {
  const url = String(request.url ?? '');
  let safe = false;
  try {
    safe = /^https?:$/.test(new URL(url).protocol);
  } catch {
    safe = false;
  }
  const link = safe
    ? h('a', { class: 'input-url', href: url, target: '_blank', rel: 'noopener noreferrer' }, url)
    : h('code', { class: 'input-url' }, url);
  return h(
    'div',
    { class: 'input-url-row' },
    link,
    h('span', { class: 'input-hint' }, safe ? 'Open it, do what it asks, then say Done.' : 'Not a web address: not opened from here.'),
  );
}

/**
 * The fields of an elicitation schema (a flat object of strings, numbers, integers, booleans,
 * enums and multi-select enums) and a function that reads them: numbers as numbers, booleans as
 * booleans, a multi-select as an array, empty fields left out. A property of another kind is a text
 * field (the server says what it refuses).
 */
function schemaFields(schema, idPrefix) {
  const properties = schema && typeof schema.properties === 'object' && schema.properties ? schema.properties : {};
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  const readers = [];
  const rows = Object.entries(properties).map(([name, prop], i) => {
    const p = prop && typeof prop === 'object' ? prop : {};
    const id = `input-${idPrefix}-${i}`.replace(/[^A-Za-z0-9_-]/g, '_');
    const isRequired = required.has(name);
    const field = schemaField(p, id, isRequired);
    readers.push([name, field.read]);
    const label = h(
      'label',
      { class: 'input-label', for: id },
      p.title || name,
      isRequired ? h('span', { class: 'input-required', title: 'required' }, ' *') : null,
    );
    const hint = typeof p.description === 'string' && p.description ? h('span', { class: 'input-hint' }, p.description) : null;
    return h('div', { class: 'input-field', dataset: { name, type: String(p.type ?? 'string') } }, label, field.el, hint);
  });
  const collect = () => {
    const values = {};
    for (const [name, read] of readers) {
      const value = read();
      if (value !== undefined) values[name] = value;
    }
    return values;
  };
  return { el: h('div', { class: 'input-fields' }, rows), collect };
}

/** The options of an enum property: `oneOf`/`anyOf` titled constants, or `enum` (titled by `enumNames`). */
function enumOptions(p) {
  const titled = Array.isArray(p.oneOf) ? p.oneOf : Array.isArray(p.anyOf) ? p.anyOf : null;
  if (titled && titled.every((o) => o && 'const' in o)) return titled.map((o) => ({ value: String(o.const), label: String(o.title ?? o.const) }));
  if (Array.isArray(p.enum)) return p.enum.map((v, i) => ({ value: String(v), label: String(Array.isArray(p.enumNames) ? (p.enumNames[i] ?? v) : v) }));
  return null;
}

const STRING_FORMATS = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };

/** One property's control and how its value is read (undefined: left out). */
function schemaField(p, id, isRequired) {
  const common = { id, name: id, 'aria-required': isRequired ? 'true' : undefined };
  if (p.type === 'boolean') {
    const el = h('input', { ...common, type: 'checkbox', class: 'input-check', checked: p.default === true });
    return { el, read: () => el.checked };
  }
  if (p.type === 'number' || p.type === 'integer') {
    const el = h('input', {
      ...common,
      type: 'number',
      class: 'input-control',
      step: p.type === 'integer' ? '1' : 'any',
      min: typeof p.minimum === 'number' ? String(p.minimum) : undefined,
      max: typeof p.maximum === 'number' ? String(p.maximum) : undefined,
      value: typeof p.default === 'number' ? String(p.default) : undefined,
    });
    return {
      el,
      read: () => {
        const text = el.value.trim();
        if (text === '') return undefined;
        const n = Number(text);
        return Number.isFinite(n) ? n : text;
      },
    };
  }
  // A multi-select enum: a box per option, read as the array of those checked.
  const choices = p.type === 'array' && p.items && typeof p.items === 'object' ? enumOptions(p.items) : null;
  if (choices) {
    const chosen = Array.isArray(p.default) ? p.default.map(String) : [];
    const boxes = choices.map((o, j) =>
      h('input', { type: 'checkbox', class: 'input-check', id: `${id}-${j}`, value: o.value, checked: chosen.includes(o.value) }),
    );
    const el = h(
      'div',
      { class: 'input-choices', id, role: 'group', 'aria-required': isRequired ? 'true' : undefined },
      choices.map((o, j) => h('span', { class: 'input-choice' }, boxes[j], h('label', { for: `${id}-${j}` }, o.label))),
    );
    return {
      el,
      read: () => {
        const values = boxes.filter((b) => b.checked).map((b) => b.value);
        return values.length ? values : undefined;
      },
    };
  }
  const options = enumOptions(p);
  if (options) {
    const el = h(
      'select',
      { ...common, class: 'input-control' },
      h('option', { value: '' }, isRequired ? 'Choose…' : '—'),
      options.map((o) => h('option', { value: o.value, selected: p.default !== undefined && String(p.default) === o.value }, o.label)),
    );
    return { el, read: () => (el.value === '' ? undefined : el.value) };
  }
  const format = STRING_FORMATS[p.format] ?? 'text';
  const el = h('input', {
    ...common,
    type: format,
    class: 'input-control',
    minlength: typeof p.minLength === 'number' ? String(p.minLength) : undefined,
    maxlength: typeof p.maxLength === 'number' ? String(p.maxLength) : undefined,
    value: typeof p.default === 'string' && format !== 'datetime-local' ? p.default : undefined,
    placeholder: p.format && format === 'text' ? p.format : undefined,
  });
  return {
    el,
    read: () => {
      if (el.value === '') return undefined;
      if (format !== 'datetime-local') return el.value;
      // The browser's local date and time, as the RFC 3339 date-time the schema asks for.
      const t = new Date(el.value);
      return Number.isNaN(t.getTime()) ? el.value : t.toISOString();
    },
  };
}

/** A round's end, in place of its form: who answered (with what) or declined, or that nobody answered in time. */
function inputEnd(event) {
  let text;
  if (event.state === 'answered') text = event.by ? `answered by ${event.by}` : 'answered';
  else if (event.state === 'declined') text = `${event.by ? `declined by ${event.by}` : 'declined'}${event.reason ? `: ${event.reason}` : ''}`;
  else if (event.state === 'timed_out') text = 'no answer in time: declined';
  else text = String(event.state ?? '');
  const answered = event.state === 'answered';
  const detail = answered && event.answer && typeof event.answer === 'object' ? answerSummary(event.answer) : '';
  const asked = (Array.isArray(event.requests) ? event.requests : []).map((r) => r?.message).filter(Boolean).join(' · ');
  return h(
    'div',
    { class: 'tool-decision input-end', dataset: { decision: answered ? 'approved' : event.state === 'declined' ? 'denied' : 'timed_out' }, title: asked || undefined },
    h('span', { class: 'decision-icon', 'aria-hidden': 'true' }, answered ? '✓' : '✕'),
    h('span', { class: 'decision-text' }, text),
    detail ? h('code', { class: 'input-answer' }, detail) : null,
  );
}

/** An answer in one line: `guests: 4 · time: 19:30` (several forms' answers by key). */
function answerSummary(answer) {
  return Object.entries(answer)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.map(String).join(', ') : v && typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join(' · ')
    .slice(0, 200);
}

class ToolCard {
  constructor(turn, event) {
    this.turn = turn;
    this.callId = event.toolCallId;
    this.state = 'running';
    // Claude's own server tools (web search…) run at the API: shown as Claude's.
    const server = event.providerExecuted ? 'Claude' : event.server;
    const tool = event.tool ?? event.toolName ?? 'tool';
    this.displayName = server ? `${server} · ${tool}` : tool;

    this.stateEl = h('span', { class: 'tool-state' }, STATE_LABELS.running);
    this.durationEl = h('span', { class: 'tool-duration', hidden: true });
    this.argsEl = h('details', { class: 'tool-section tool-args' });
    this.setInput(event.input);
    this.approvalEl = h('div', { class: 'tool-approval', hidden: true });
    this.decisionEl = h('div', { class: 'tool-decision', hidden: true });
    // The server's questions, one block per round (src/core/stream-events.ts `data-input`).
    this.inputsEl = h('div', { class: 'tool-inputs', hidden: true });
    this.rounds = new Map();
    this.resultEl = h('div', { class: 'tool-section tool-result', hidden: true });

    this.el = h(
      'div',
      { class: 'tool-card', dataset: { callId: this.callId, state: 'running' } },
      h(
        'div',
        { class: 'tool-head' },
        h('span', { class: 'tool-icon', 'aria-hidden': 'true' }),
        h(
          'span',
          { class: 'tool-name', title: event.toolName ?? '' },
          server
            ? [h('span', { class: 'tool-server' }, server), h('span', { class: 'tool-sep' }, '·')]
            : null,
          h('span', { class: 'tool-tool' }, tool),
        ),
        h('span', { class: 'tool-spacer' }),
        this.durationEl,
        this.stateEl,
      ),
      this.argsEl,
      this.approvalEl,
      this.decisionEl,
      this.inputsEl,
      this.resultEl,
    );
  }

  setInput(input) {
    if (input === undefined) {
      this.argsEl.hidden = true;
      return;
    }
    this.input = input;
    const isEmpty = input === null || (typeof input === 'object' && Object.keys(input).length === 0);
    this.argsEl.hidden = false;
    this.argsEl.replaceChildren(
      h(
        'summary',
        null,
        h('span', { class: 'section-label' }, 'Arguments'),
        h('code', { class: 'section-preview' }, isEmpty ? 'none' : jsonPreview(input)),
      ),
      h('pre', { class: 'mono-block' }, h('code', null, prettyJson(input))),
    );
  }

  setState(state) {
    this.state = state;
    this.el.dataset.state = state;
    this.stateEl.textContent = STATE_LABELS[state] ?? state;
  }

  approval(event) {
    if (event.state === 'waiting') {
      if (this.state === 'ok' || this.state === 'error' || this.state === 'denied') return;
      this.setState('waiting');
      if (!this.argsEl.open) {
        this.argsEl.open = true;
        this.autoOpened = true;
      }
      this.renderApprovalButtons(event);
    } else {
      this.approvalEl.hidden = true;
      this.approvalEl.replaceChildren();
      if (this.autoOpened) {
        this.argsEl.open = false;
        this.autoOpened = false;
      }
      this.showDecision(event.state, event.by, event.reason);
      if (event.state === 'approved') {
        if (this.state === 'waiting') this.setState('running');
      } else if (this.state !== 'ok' && this.state !== 'error') {
        this.setState('denied');
      }
    }
    this.turn.refreshWorking();
  }

  showDecision(state, by, reason) {
    this.decisionEl.hidden = false;
    this.decisionEl.dataset.decision = state;
    let text;
    if (state === 'approved') text = by ? `approved by ${by}` : 'approved';
    else if (state === 'denied') text = `${by ? `denied by ${by}` : 'denied'}${reason ? `: ${reason}` : ''}`;
    else if (state === 'timed_out') text = `approval timed out${reason ? `: ${reason}` : ''}`;
    else text = state;
    this.decisionEl.replaceChildren(
      h('span', { class: 'decision-icon', 'aria-hidden': 'true' }, state === 'approved' ? '✓' : '✕'),
      h('span', { class: 'decision-text' }, text),
    );
  }

  renderApprovalButtons(event) {
    this.approvalEl.hidden = false;
    const message = h('div', { class: 'approval-message' });
    const timeout =
      typeof event.timeoutMs === 'number' && event.timeoutMs > 0
        ? ` · times out after ${formatDuration(event.timeoutMs)}`
        : '';
    const approve = h('button', { type: 'button', class: 'approve' }, '✓ Approve');
    const deny = h('button', { type: 'button', class: 'deny' }, 'Deny');
    const buttons = h('div', { class: 'approval-buttons' }, approve, deny);
    const text = h(
      'div',
      { class: 'approval-text' },
      h('strong', null, 'Waiting for approval'),
      h('span', null, `Claude wants to run this tool${timeout}.`),
    );
    const row = h('div', { class: 'approval-row' }, text, buttons);
    this.approvalEl.replaceChildren(row, message);

    approve.addEventListener('click', () => this.decide(true, undefined, [approve, deny], message));
    deny.addEventListener('click', () => {
      const reason = h('input', {
        type: 'text',
        class: 'deny-reason',
        placeholder: 'Why not? (sent to Claude)',
        'aria-label': 'Reason for denying',
      });
      const confirm = h('button', { type: 'button', class: 'deny-confirm' }, 'Deny call');
      const cancel = h('button', { type: 'button', class: 'deny-cancel' }, 'Cancel');
      const form = h('div', { class: 'deny-form' }, reason, confirm, cancel);
      row.replaceWith(form);
      reason.focus();
      const submit = () =>
        this.decide(false, reason.value.trim() || undefined, [confirm, cancel, reason], message);
      confirm.addEventListener('click', submit);
      reason.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') {
          e.preventDefault();
          submit();
        } else if (e.key === 'Escape') {
          e.preventDefault();
          form.replaceWith(row);
        }
      });
      cancel.addEventListener('click', () => form.replaceWith(row));
    });
  }

  async decide(approved, reason, controls, message) {
    for (const c of controls) c.disabled = true;
    message.className = 'approval-message';
    message.textContent = approved ? 'Approving…' : 'Denying…';
    const body = { approved };
    if (reason) body.reason = reason;
    try {
      const res = await request(`v1/approvals/${enc(this.turn.turnId)}/${enc(this.callId)}`, {
        method: 'POST',
        body,
      });
      if (res.status === 409) {
        const err = await errorOf(res);
        message.className = 'approval-message warn';
        message.textContent = `${err.message || 'This call is no longer waiting.'}`;
        return;
      }
      if (!res.ok) throw await errorOf(res);
      const result = await res.json().catch(() => ({}));
      message.textContent = '';
      // The records decided (src/core/approvals.ts ApprovalRecord: callId, outcome, decidedBy, reason):
      // shown at once, before the turn's stream brings the same decision.
      const decision = Array.isArray(result?.decisions)
        ? result.decisions.find((d) => d && d.callId === this.callId)
        : undefined;
      const outcome = decision?.outcome;
      if (this.state === 'waiting' && (outcome === 'approved' || outcome === 'denied')) {
        this.approval({ state: outcome, by: decision.decidedBy, reason: decision.reason });
      }
    } catch (err) {
      for (const c of controls) c.disabled = false;
      message.className = 'approval-message error';
      message.textContent = err.message || String(err);
    }
  }

  /**
   * A round of the server's questions (`data-input`): while it waits, a form built from each
   * question's schema (or a URL to visit) with Submit / Done and Decline; once it has ended, who
   * answered, declined, or that nobody did in time.
   */
  inputRound(event) {
    const round = Number(event.round) || 1;
    let block = this.rounds.get(round);
    if (!block) {
      block = { el: h('div', { class: 'tool-input', dataset: { round: String(round) } }), waiting: false };
      this.rounds.set(round, block);
      this.inputsEl.append(block.el);
      this.inputsEl.hidden = false;
    }
    block.el.dataset.state = event.state;
    if (event.state === 'waiting') {
      if (block.waiting || block.ended) return;
      if (this.state === 'ok' || this.state === 'error' || this.state === 'denied') return;
      block.waiting = true;
      this.setState('input');
      block.el.replaceChildren(...inputForm(event, (body, controls, message) => this.answer(round, body, controls, message)));
      block.el.classList.add('tool-approval');
    } else {
      block.waiting = false;
      block.ended = true;
      block.el.classList.remove('tool-approval');
      block.el.replaceChildren(inputEnd(event));
      if (this.state === 'input') this.setState('running');
    }
    this.turn.refreshWorking();
  }

  /** Sends a round's answer (`{input}`), its decline (`{approved:false}`) or a URL question's done (`{approved:true}`). */
  async answer(round, body, controls, message) {
    for (const c of controls) c.disabled = true;
    message.className = 'approval-message';
    message.textContent = body.input !== undefined ? 'Sending…' : body.approved ? 'Telling the server…' : 'Declining…';
    try {
      const res = await request(`v1/approvals/${enc(this.turn.turnId)}/${enc(this.callId)}`, { method: 'POST', body });
      if (res.status === 409) {
        const err = await errorOf(res);
        message.className = 'approval-message warn';
        message.textContent = err.message || 'These questions are no longer waiting.';
        return;
      }
      if (!res.ok) throw await errorOf(res);
      const result = await res.json().catch(() => ({}));
      message.textContent = '';
      // The record decided (src/core/approvals.ts): shown at once, before the turn's stream brings the same end.
      const decision = Array.isArray(result?.decisions)
        ? result.decisions.find((d) => d && d.callId === this.callId && d.kind === 'input')
        : undefined;
      const block = this.rounds.get(round);
      if (decision && block?.waiting && (decision.outcome === 'approved' || decision.outcome === 'denied')) {
        this.inputRound({
          round,
          state: decision.outcome === 'approved' ? 'answered' : 'declined',
          by: decision.decidedBy,
          reason: decision.reason,
          answer: decision.answer,
          requests: decision.requests,
        });
      }
    } catch (err) {
      // Refused (a 400: the answer does not fit the questions): the server's line next to the form, to correct it.
      for (const c of controls) c.disabled = false;
      message.className = 'approval-message error';
      message.textContent = err.message || String(err);
    }
  }

  output(event) {
    this.approvalEl.hidden = true;
    if (event.notRun === 'denied') this.setState('denied');
    else this.setState(event.isError ? 'error' : 'ok');
    const timing = [];
    if (typeof event.durationMs === 'number' && !event.providerExecuted && (event.durationMs > 0 || !event.notRun))
      timing.push(formatDuration(event.durationMs));
    if (typeof event.attempts === 'number' && event.attempts > 1) timing.push(`${event.attempts} attempts`);
    this.durationEl.hidden = timing.length === 0;
    this.durationEl.textContent = timing.join(' · ');
    const notes = [];
    if (event.notRun === 'repeated') notes.push('Not run: Claude repeated an earlier call');
    else if (event.notRun === 'refused') notes.push('Not run: refused');
    else if (event.notRun === 'denied' && this.decisionEl.hidden) notes.push('Not run: denied');

    // A denied call's output only repeats the decision line.
    const hasOutput =
      typeof event.output === 'string' &&
      event.output !== '' &&
      !(event.notRun === 'denied' && !this.decisionEl.hidden);
    if (!hasOutput && notes.length === 0) return;
    this.resultEl.hidden = false;
    const children = [];
    if (notes.length) children.push(h('div', { class: 'tool-note' }, notes.join(' · ')));
    if (hasOutput) {
      const text = prettyOutput(event.output);
      const sizeText = typeof event.resultBytes === 'number' ? formatBytes(event.resultBytes) : '';
      const lineCount = text.split('\n').length;
      const long = lineCount > 7 || text.length > 700;
      const pre = h('pre', { class: `mono-block${long ? ' clamped' : ''}` }, h('code', null, text));
      const more = long
        ? h(
            'button',
            {
              type: 'button',
              class: 'show-more',
              onclick: () => {
                const clamped = pre.classList.toggle('clamped');
                more.textContent = clamped ? `Show all ${lineCount} lines` : 'Show less';
              },
            },
            `Show all ${lineCount} lines`,
          )
        : null;
      const details = h(
        'details',
        { class: 'tool-output', open: true },
        h(
          'summary',
          null,
          h('span', { class: 'section-label' }, event.isError ? 'Error' : 'Result'),
          h('code', { class: 'section-preview' }, text.replace(/\s+/g, ' ').slice(0, 120)),
          sizeText ? h('span', { class: 'section-size' }, sizeText) : null,
        ),
        h('div', { class: 'output-wrap' }, pre, more),
      );
      children.push(details);
    }
    this.resultEl.replaceChildren(...children);
  }

  /** The turn ended: a call still shown running or waiting did not get a result. */
  settle(status) {
    if (this.state === 'running' || this.state === 'waiting' || this.state === 'input') {
      this.approvalEl.hidden = true;
      for (const round of this.rounds.values()) {
        if (!round.waiting) continue;
        round.waiting = false;
        round.el.classList.remove('tool-approval');
        round.el.replaceChildren(h('div', { class: 'tool-note' }, 'Not answered: the turn ended'));
      }
      this.setState(status === 'completed' ? 'ok' : 'error');
      if (status !== 'completed') this.stateEl.textContent = 'No result';
    }
  }
}

// ---------------------------------------------------------------------------------------------
// A conversation

class ConversationView {
  constructor(id) {
    this.id = id;
    this.abort = new AbortController();
    this.turns = new Map();
    this.pending = new Set();
    this.views = [];
    this.exists = false;
    this.status = '';
    this.queued = 0;
    this.pollTimer = 0;
    this.thread = h('div', { class: 'thread' });
    this.queuedNote = h('div', { class: 'queued-note', hidden: true });
    this.empty = emptyState();
    this.el = h('div', { class: 'conversation' }, this.empty, this.thread, this.queuedNote);
  }

  close() {
    this.abort.abort();
    clearTimeout(this.pollTimer);
  }

  updateEmpty() {
    const hasTurns = this.views.length > 0;
    this.empty.hidden = hasTurns || !this.loaded;
    this.el.classList.toggle('is-empty', !hasTurns);
  }

  async load() {
    this.loaded = false;
    this.updateEmpty();
    let conv;
    try {
      conv = await requestJson(`v1/conversations/${enc(this.id)}`, { signal: this.abort.signal });
    } catch (err) {
      if (this.abort.signal.aborted) return;
      this.loaded = true;
      if (err.status === 404) {
        this.exists = false;
        // Not started yet (a new chat), or not there for this caller: a conversation sent to here
        // before is gone (or not theirs), and leaves the list.
        if (localEntry(this.id)?.sent) {
          forgetConversation(this.id);
          renderConversationList();
        }
        this.updateEmpty();
        updateHeader();
        return;
      }
      this.updateEmpty();
      showBanner(`Could not load this conversation: ${err.message || err}`);
      return;
    }
    if (this.abort.signal.aborted) return;
    this.loaded = true;
    this.exists = true;
    this.applyConversation(conv);
    const ids = [...(conv.turnIds ?? [])];
    if (conv.currentTurnId && !ids.includes(conv.currentTurnId)) ids.push(conv.currentTurnId);
    const views = ids.map((turnId) => this.addTurn(turnId));
    this.updateEmpty();
    scheduleScroll(true);
    // Read the turns' streams: the running one at once, the closed ones a few at a time.
    const queue = [...views].reverse();
    const worker = async () => {
      for (let v = queue.shift(); v; v = queue.shift()) await v.follow();
    };
    for (let n = 0; n < HISTORY_CONCURRENCY; n++) worker();
    this.schedulePoll();
  }

  applyConversation(conv) {
    this.status = normalizeStatus(conv.status);
    this.queued = typeof conv.queued === 'number' ? conv.queued : 0;
    this.queuedNote.hidden = this.queued <= 0 || this.pending.size > 0;
    this.queuedNote.textContent =
      this.queued === 1
        ? '1 message queued, waiting for the running turn'
        : `${this.queued} messages queued, waiting for the running turn`;
    updateHeader();
  }

  addTurn(turnId, options = {}) {
    const existing = this.turns.get(turnId);
    if (existing) return existing;
    const view = new TurnView(this, { turnId, ...options });
    this.turns.set(turnId, view);
    this.views.push(view);
    this.thread.append(view.el);
    this.updateEmpty();
    updateHeader();
    return view;
  }

  noteQuestion(view, text) {
    if (this.views[0] === view) {
      if (titleOf(this.id) !== titleFrom(text)) {
        rememberTitle(this.id, titleFrom(text));
        renderConversationList();
        updateHeader();
      }
    }
  }

  turnSettled() {
    if (![...this.turns.values(), ...this.pending].some((v) => !FINAL_STATUSES.has(v.status))) {
      refreshListSoon();
    }
    this.schedulePoll(800);
  }

  /** Picks up turns that started elsewhere (another tab, the CLI, queued messages). */
  schedulePoll(delay = CONVERSATION_POLL_MS) {
    clearTimeout(this.pollTimer);
    if (this.abort.signal.aborted) return;
    this.pollTimer = setTimeout(() => this.poll(), delay);
  }

  async poll() {
    if (this.abort.signal.aborted || document.hidden) return this.schedulePoll();
    const busy =
      this.queued > 0 ||
      this.pending.size > 0 ||
      [...this.turns.values()].some((v) => !FINAL_STATUSES.has(v.status));
    const next = busy ? CONVERSATION_POLL_MS : CONVERSATION_POLL_MS * 4;
    try {
      const conv = await requestJson(`v1/conversations/${enc(this.id)}`, { signal: this.abort.signal });
      if (this.abort.signal.aborted) return;
      this.exists = true;
      this.applyConversation(conv);
      const unclaimed = [...this.pending].some((v) => !v.turnId);
      if (!unclaimed) {
        const ids = [...(conv.turnIds ?? [])];
        if (conv.currentTurnId && !ids.includes(conv.currentTurnId)) ids.push(conv.currentTurnId);
        for (const turnId of ids) {
          if (!this.turns.has(turnId)) this.addTurn(turnId).follow();
        }
      }
    } catch {
      /* not there yet, or the server is away: try again later */
    }
    this.schedulePoll(next);
  }

  /** Sends a message and streams the answer's turn. */
  async send(text) {
    const messageId = newId('msg');
    const view = new TurnView(this, { question: text });
    view.queued = this.turns.size > 0 && [...this.turns.values()].some((v) => !FINAL_STATUSES.has(v.status));
    view.refreshWorking();
    this.pending.add(view);
    this.views.push(view);
    this.thread.append(view.el);
    this.updateEmpty();
    rememberConversation(this.id, { sent: true, sentAt: Date.now() });
    if (!titleOf(this.id)) rememberTitle(this.id, titleFrom(text));
    renderConversationList();
    updateHeader();
    scheduleScroll(true);

    const signal = view.abort.signal;
    try {
      await followStream({
        signal,
        open: (lastId) => {
          if (view.turnId) {
            const after = lastId ?? (view.lastOffset >= 0 ? view.lastOffset : null);
            return request(`v1/turns/${enc(view.turnId)}/events`, {
              headers: {
                Accept: 'text/event-stream',
                ...(after !== null ? { 'Last-Event-ID': String(after) } : {}),
              },
              signal,
            });
          }
          return request(`v1/conversations/${enc(this.id)}/messages`, {
            method: 'POST',
            headers: { Accept: 'text/event-stream' },
            body: { text, messageId },
            signal,
          });
        },
        onEvent: (event) => {
          if (!view.turnId && event.turnId) {
            const other = this.turns.get(event.turnId);
            if (other && other !== view) {
              // Another reader already shows this turn: keep that one.
              view.abort.abort();
              view.el.remove();
              this.views = this.views.filter((v) => v !== view);
              this.pending.delete(view);
              return;
            }
            view.setTurnId(event.turnId);
            this.turns.set(event.turnId, view);
            this.exists = true;
            if (this.views.length === 1 || this.status !== 'running') {
              this.status = 'running';
              updateHeader();
            }
          }
          view.handle(event);
        },
        onReconnecting: (on) => view.el.classList.toggle('reconnecting', on),
      });
    } catch (err) {
      if (!signal.aborted) {
        view.showError(err.message || String(err));
        view.setStatus('failed');
      }
    } finally {
      this.pending.delete(view);
      if (!signal.aborted && !FINAL_STATUSES.has(view.status))
        view.setStatus(view.status === 'pending' ? 'failed' : view.status);
      refreshListSoon();
      this.schedulePoll(1000);
    }
  }
}

function titleFrom(text) {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/** Servers a suggestion is made for, at most. */
const SUGGESTED_SERVERS = 3;

/**
 * The starter questions: about the MCP servers the worker has (`servers` in /v1/info), so each one
 * can be answered; none when serve does not know them (its work goes to a worker elsewhere) or
 * there are none.
 */
function suggestionsOf(info) {
  const servers = Array.isArray(info?.servers) ? info.servers.filter((s) => typeof s === 'string' && s) : [];
  if (!servers.length) return [];
  return ['What tools can you use?', ...servers.slice(0, SUGGESTED_SERVERS).map((s) => `What can you do with the ${s} server?`)];
}

function emptyState() {
  const suggestions = suggestionsOf(app.info);
  return h(
    'div',
    { class: 'empty-state', hidden: true },
    h('div', { class: 'empty-mark', 'aria-hidden': 'true' }, 'M'),
    h('h2', null, 'What can I help with?'),
    h(
      'p',
      null,
      'Claude answers with the tools of your MCP servers. Each answer runs as a durable Temporal workflow — reload any time, it keeps going.',
    ),
    h(
      'div',
      { class: 'suggestions', hidden: suggestions.length === 0 },
      suggestions.map((s) =>
        h(
          'button',
          {
            type: 'button',
            class: 'suggestion',
            onclick: () => {
              ui.composer.value = s;
              autoGrow();
              updateSendState();
              ui.composer.focus();
            },
          },
          s,
        ),
      ),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Header

function updateHeader() {
  const conv = app.current;
  if (!conv) return;
  const serverItem = app.serverConversations.find((c) => c.id === conv.id);
  const hasTitle = titleOf(conv.id) || isSummaryUseful(serverItem?.summary, conv.id);
  ui.title.textContent = hasTitle
    ? conversationTitle(conv.id, serverItem)
    : conv.exists
      ? 'Untitled conversation'
      : 'New chat';
  document.title = hasTitle ? `${conversationTitle(conv.id, serverItem)} · mcp-turns` : 'mcp-turns';
  ui.convId.textContent = conv.id;
  // An admin sees whose this is (the server's list says), as on its sidebar row.
  ui.convOwner.hidden = !(app.caller?.admin && serverItem);
  ui.convOwner.replaceChildren(...(ui.convOwner.hidden ? [] : [ownerChip(serverItem.owner)]));
  const n = conv.views.length;
  ui.convTurns.textContent =
    n > 0 ? `${n} turn${n === 1 ? '' : 's'}` : conv.exists || !conv.loaded ? '' : 'not started';
  const status = conv.status === 'running' ? '' : conv.status;
  ui.convStatus.hidden = !status;
  ui.convStatus.textContent = statusLabel(status);
  ui.convStatus.dataset.status = status;
  const info = app.info;
  if (conv.exists && info?.uiUrl && info?.namespace) {
    ui.convLink.hidden = false;
    ui.convLink.href = `${info.uiUrl.replace(/\/+$/, '')}/namespaces/${enc(info.namespace)}/workflows/${enc(conv.id)}`;
  } else {
    ui.convLink.hidden = true;
  }
}

// ---------------------------------------------------------------------------------------------
// Selection and routing (#c=<conversationId>)

function hashConversation() {
  const m = /(?:^#|&)c=([^&]+)/.exec(location.hash);
  if (!m) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return null;
  }
}

function selectConversation(id) {
  if (app.current?.id === id) return;
  const previous = app.current;
  previous?.close();
  if (
    previous &&
    previous.loaded &&
    !previous.exists &&
    previous.views.length === 0 &&
    !localEntry(previous.id)?.sent
  ) {
    // An empty new chat that was left: not worth a place in the list.
    localConversations = localConversations.filter((c) => c.id !== previous.id);
    saveLocal(localConversations);
  }
  showBanner('');
  const view = new ConversationView(id);
  app.current = view;
  ui.host.replaceChildren(view.el);
  stickToBottom = true;
  updateHeader();
  renderConversationList();
  view.load();
  if (!matchMedia('(pointer: coarse)').matches) ui.composer.focus();
}

function newConversation() {
  const current = app.current;
  if (current && !current.exists && current.views.length === 0) {
    ui.composer.focus();
    return;
  }
  const id = newId('conv');
  rememberConversation(id, {});
  location.hash = `c=${enc(id)}`;
}

window.addEventListener('hashchange', () => {
  const id = hashConversation();
  if (id) selectConversation(id);
  else newConversation();
});

ui.newChat.addEventListener('click', newConversation);

// ---------------------------------------------------------------------------------------------
// Composer

function autoGrow() {
  ui.composer.style.height = 'auto';
  ui.composer.style.height = `${Math.min(ui.composer.scrollHeight, 240)}px`;
}

function updateSendState() {
  ui.send.disabled = ui.composer.value.trim() === '' || !app.info;
}

ui.composer.addEventListener('input', () => {
  autoGrow();
  updateSendState();
});

ui.composer.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
    e.preventDefault();
    submit();
  }
});

ui.form.addEventListener('submit', (e) => {
  e.preventDefault();
  submit();
});

function submit() {
  const text = ui.composer.value.trim();
  if (!text || !app.info) return;
  if (!app.current) {
    const id = newId('conv');
    rememberConversation(id, {});
    history.replaceState(null, '', `#c=${enc(id)}`);
    selectConversation(id);
  }
  ui.composer.value = '';
  autoGrow();
  updateSendState();
  app.current.send(text);
}

// ---------------------------------------------------------------------------------------------
// Start

async function start() {
  setConnection('pending', 'Connecting…');
  renderConversationList();
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch('v1/info', { headers: authHeaders() });
      if (res.status === 401) {
        const err = await errorOf(res);
        await needSignIn(auth.token ? `The token was not accepted: ${err.message}` : '');
        continue;
      }
      if (!res.ok) throw await errorOf(res);
      app.info = await res.json();
      break;
    } catch (err) {
      setConnection('error', 'Server unreachable');
      showBanner(`Cannot reach the server: ${err.message || err}. Retrying…`);
      await sleep(Math.min(10000, 1000 * 2 ** Math.min(attempt, 3)));
    }
  }
  showBanner('');
  ui.version.textContent = app.info.version ? `v${String(app.info.version).replace(/^v/, '')}` : '';
  setConnection('ok', app.info.namespace ? `${app.info.namespace}` : 'Connected');
  ui.connection.title = app.info.uiUrl ? `Namespace ${app.info.namespace} · ${app.info.uiUrl}` : '';
  if (app.info.authRequired) {
    ui.signOut.hidden = !auth.token;
    // The server names the caller of valid credentials only: none named, none accepted.
    while (!auth.token || !app.info.caller) {
      await needSignIn(auth.token ? 'The token was not accepted.' : '');
      // Signed in now: what the server tells only a caller with a token (who they are, its MCP servers).
      try {
        app.info = await fetchInfo();
      } catch {
        break; // kept: what the first answer told
      }
    }
  }
  useIdentity(app.info.caller);
  renderAccount();
  updateSendState();
  const id = hashConversation();
  if (id) {
    selectConversation(id);
  } else {
    const newest = localConversations.find((c) => !c.sent && !titleOf(c.id));
    const fresh = newest?.id ?? newId('conv');
    if (!newest) rememberConversation(fresh, {});
    history.replaceState(null, '', `#c=${enc(fresh)}`);
    selectConversation(fresh);
  }
  refreshConversationList();
  setInterval(() => {
    if (!document.hidden) renderConversationList();
  }, 60000);
}

start();
