// Local imitation of the Data Pipelines API (spec 000 sections 2.3-2.5, 4.1, 5, 7, 8) with a test and
// inspector API under /_/. Node built-ins only, so `npx svc-analytics collector` needs nothing else.
//
// Ingestion
//   POST /v1/batch  {"batch": [message, ...], "sentAt"?, "writeKey"?}
//   POST /v1/{identify,track,page,screen,group,alias}  one message; `type` defaults to the path.
//   Auth: an Authorization header must be `Basic base64(writeKey + ":")`; without one, the body's
//   `writeKey` (beacons). Any key is accepted when the collector was started with writeKey null.
//   Answered in this order (the first that applies wins; a request is accepted whole or not at all):
//     1. injected faults (/_/fault): the delay, then the status;
//     2. body not JSON (and not over the size limit) -> 400;
//     3. missing or wrong write key -> 401;
//     4. body over 500,000 bytes (batch) or 32,000 bytes (single endpoint) -> 200, dropped, overLimit;
//     5. no "batch" array of objects / body not an object -> 400;
//     6. a message whose event is the poisoned one (/_/fault) -> poisonStatus;
//     7. a message over 32,000 bytes serialised -> 200, dropped, overLimit;
//     8. a malformed message or body -> 400, `error` naming the messageId and the field (see
//        messageProblems: type, messageId, timestamp, sentAt, userId/anonymousId, integrations of
//        booleans, object context/properties/traits, track event, group groupId, objectTypeId);
//     9. otherwise 200 {"success": true} and every message is accepted.
//   Over-limit, auth and malformed outcomes are violations (see /_/violations). Faults and poison are not.
//   CORS for any origin (a private-network preflight included), as the real API answers. Bodies past the limit are
//   read to their end without being kept (their messages are not kept either: the record keeps the ids it could
//   read); past MAX_BODY_READ (4 MiB) the collector stops reading, answers 413 and closes the connection. The
//   records and accepted messages held are bounded by count (maxRequests, maxMessages) and bytes (maxBytes).
//
// Who may use the inspector and the test API (CONTRACT section 6): the inspector's own origin, and the origins
//   given as allowOrigins (the CLI's demo and --allow-origin), with CORS for those; other origins are refused
//   (403, no CORS headers), their preflights (private-network ones included) too. Requests whose Host is not
//   127.0.0.1, localhost or [::1] (or the host the collector listens on) are refused: DNS rebinding. A browser's
//   POST must be Content-Type: application/json (415 otherwise), so none is a CORS-simple request; a browser request
//   from another site without an allowed Origin is refused, except a navigation (a link to the inspector). Node,
//   curl and scripts send neither Origin nor Sec-Fetch-Site and are answered as before.
//
// Test API (JSON, no auth; answered at once except /_/messages?min=N and /_/stream)
//   GET  /_/messages    Accepted messages in arrival order, each with `_requestId` and `_receivedAt`.
//                       Filters, exact string match on the message's field: type, event, name, userId,
//                       anonymousId, messageId, groupId. `min=N` waits until at least N messages match
//                       or `timeout` ms pass (default 5000, at most 30000), then answers what matches.
//   GET  /_/requests    One record per ingestion request, oldest first (the last maxRequests): id, at,
//                       method, path, status (0: the client left during an injected delay), bytes,
//                       contentType, auth ('basic' | 'body' | 'none'), origin, overLimit (false |
//                       'batch' | 'message'), fault (null | 'slow' | 'status' | 'poison'), aborted, error,
//                       malformed ([{ index, messageId, field, problem, text }]; index null for the
//                       body), violation (null | { kind: 'over-limit' | 'auth' | 'malformed', reason }),
//                       durationMs, messageIds, messages (as received), retryOf (messageIds seen before).
//   GET  /_/violations  The records of /_/requests whose `violation` is set: over a size limit, a missing
//                       or wrong write key, or malformed. A correct client leaves it empty. With a tracking
//                       plan (`plan`, the CLI's --plan), then one entry per message off the plan: { kind: 'plan',
//                       requestId, at, messageId, type, event, pointer, expected, violation: { kind, reason } };
//                       the request's record lists them too, as `plan` (the inspector shows them by the message).
//   GET  /_/stats       Counters since the last reset: requests, messages (accepted), bytes, retries,
//                       rejected (answered >= 400), overLimit, faults (status and poison), violations.
//   GET  /_/fault       The active faults: { status, delay, poison }, each null when off.
//   POST /_/fault       Replaces all faults (`{}` clears them); 400 with `error` when a field is invalid.
//                       status: HTTP status 200-599 to answer instead of processing;
//                       times: positive integer, how many requests the status and the delay apply to
//                         (each counted separately; default: until cleared);
//                       retryAfter: seconds or an HTTP date, sent as Retry-After with `status`;
//                       headers: { name: value } strings, more response headers sent with `status`;
//                       delayMs: 0-120000, wait before answering (a client that leaves meanwhile gets
//                         nothing and nothing is accepted);
//                       poisonEvent: answer every request carrying a message with this `event` with
//                         poisonStatus (HTTP status, default 400), until cleared.
//   POST /_/reset       Forgets requests, messages, counters and faults.
//   GET  /_/stream      Server-Sent Events for the inspector: `snapshot` (recent requests, stats, fault,
//                       info), then `request`, `stats`, `fault` and `reset`.
//   GET  /_/info        { messageLimit, batchLimit, anyKey, logFile }.
//   GET  /              The inspector page.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPlan, planEntries, planModule } from './plan.mjs';

/** Largest serialised message (UTF-8 bytes) the service processes: the stricter reading of "32 KB". */
export const MESSAGE_LIMIT = 32000;
/** Largest request body (bytes) the service processes: the stricter reading of "500 KB". */
export const BATCH_LIMIT = 500000;

/** The single-message endpoints, `POST /v1/<type>`. */
export const MESSAGE_TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias'];

// Bodies past an endpoint's limit are answered 200 and dropped, as the service does: read to their end without being
// kept, up to this; past it, the collector stops reading, answers 413 and closes the connection.
export const MAX_BODY_READ = 4 * 1024 * 1024;
// Bodies of the control API (faults, reset) are small.
const MAX_CONTROL_BODY = 64 * 1024;
// An inspector that does not read its stream is dropped past this much unsent (it reconnects and gets a snapshot).
const MAX_STREAM_BUFFER = 32 * 1024 * 1024;
const MAX_DELAY_MS = 120000;
const MAX_WAIT_MS = 30000;
const SNAPSHOT_REQUESTS = 300;
const HEARTBEAT_MS = 15000;

const INSPECTOR_FILE = fileURLToPath(new URL('./inspector.html', import.meta.url));

/**
 * CORS headers of the ingestion endpoints (/v1/*), for any browser origin, as the real API answers: also sent on
 * errors and injected faults so that page code can read the status and Retry-After.
 * @param {http.IncomingMessage} req
 * @returns {Record<string, string>}
 */
export function corsHeaders(req) {
  const origin = req.headers.origin;
  const headers = {
    'Access-Control-Allow-Origin': origin || '*',
    'Access-Control-Allow-Methods': 'POST, GET, OPTIONS',
    'Access-Control-Allow-Headers': 'Content-Type, Authorization',
    'Access-Control-Expose-Headers': 'Retry-After',
    'Access-Control-Max-Age': '600',
  };
  if (origin) headers.Vary = 'Origin';
  // Chrome's Private Network Access asks before a public page may call 127.0.0.1: a site under test may be a
  // public one (a staging host) whose events the kit sends here. Ingestion only; never the control API.
  if (req.headers['access-control-request-private-network'] === 'true') {
    headers['Access-Control-Allow-Private-Network'] = 'true';
  }
  return headers;
}

/** The host names the inspector and the control API answer to (DNS rebinding: a page's own name pointed here). */
export const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];
const WILDCARD_HOSTS = ['0.0.0.0', '::', '[::]'];

/**
 * `scheme://host[:port]` of an http(s) origin, as browsers send it in `Origin`; throws for anything else.
 * @param {string} value
 */
export function normalizeOrigin(value) {
  let url;
  try {
    url = new URL(String(value));
  } catch {
    throw new Error(`not an origin: "${value}" (an origin is http(s)://host[:port], such as http://localhost:3000)`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.pathname !== '/' || url.search || url.hash) {
    throw new Error(`not an origin: "${value}" (an origin is http(s)://host[:port], with no path, such as http://localhost:3000)`);
  }
  return url.origin;
}

/** The host name of a Host header (lowercase, IPv6 bracketed), or null when it is not one. */
function hostName(header) {
  if (typeof header !== 'string' || !header || /[\s/?#@\\]/.test(header)) return null;
  try {
    return new URL(`http://${header}`).hostname;
  } catch {
    return null;
  }
}

/**
 * Who may use the inspector (/) and the control API (/_/*): CONTRACT section 6. A request passes when its Host is a
 * loopback name (or the host the collector was started on), and, from a browser, when it comes from the inspector's
 * own origin or an allowed one (`allowOrigins`: the demo's, `--allow-origin`). Node and curl send neither Origin nor
 * Sec-Fetch-Site, so tests and scripts on this machine keep working.
 */
function createGate({ host, allowOrigins }) {
  const names = new Set(LOOPBACK_NAMES);
  if (host && !WILDCARD_HOSTS.includes(host)) names.add(hostName(host.includes(':') ? `[${host}]` : host));
  const allowed = new Set((allowOrigins || []).map(normalizeOrigin));
  const refuse = (error) => ({ ok: false, error });
  return {
    allowed,
    /** @returns {{ ok: true, origin: string | null } | { ok: false, error: string }} origin: the allowed other origin, for CORS. */
    check(req) {
      const name = hostName(req.headers.host);
      if (!name || !names.has(name)) {
        return refuse(`Host "${req.headers.host ?? ''}" is not a loopback name: the inspector and the control API answer only at ${[...names].join(', ')}`);
      }
      const origin = req.headers.origin;
      if (origin !== undefined) {
        if (origin === new URL(`http://${req.headers.host}`).origin) return { ok: true, origin: null };
        if (allowed.has(origin)) return { ok: true, origin };
        return refuse(`origin ${origin} may not use the collector's inspector or control API (start it with --allow-origin ${origin} to let it)`);
      }
      // A browser request without an Origin: a navigation, or a no-cors load (an <img>, a <script>). Navigations may
      // come from anywhere (the demo's link to the inspector, a bookmark); a cross-site no-cors load may not.
      const site = req.headers['sec-fetch-site'];
      if (site && site !== 'same-origin' && site !== 'none') {
        const navigation = req.headers['sec-fetch-mode'] === 'navigate' && (req.method === 'GET' || req.method === 'HEAD');
        if (!navigation) return refuse(`a ${site} request without an allowed Origin may not use the collector's control API`);
      }
      return { ok: true, origin: null };
    },
  };
}

/** CORS headers of the control API for an allowed other origin (none for the inspector's own). */
function controlCors(req, origin) {
  if (!origin) return { Vary: 'Origin' };
  const headers = {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
    'Access-Control-Allow-Headers': 'Content-Type',
    'Access-Control-Max-Age': '600',
    Vary: 'Origin',
  };
  if (req.headers['access-control-request-private-network'] === 'true') headers['Access-Control-Allow-Private-Network'] = 'true';
  return headers;
}

function send(res, req, status, body, contentType, extra = {}) {
  if (res.writableEnded || res.destroyed) return;
  const buf = Buffer.from(body);
  res.writeHead(status, {
    ...res.svcCors,
    'Content-Type': contentType,
    'Content-Length': String(buf.length),
    'Cache-Control': 'no-store',
    ...extra,
  });
  res.end(req.method === 'HEAD' ? undefined : buf);
}

function sendJson(res, req, status, value, extra) {
  send(res, req, status, JSON.stringify(value), 'application/json; charset=utf-8', extra);
}

/**
 * Reads a request body, keeping at most `keep` bytes: past that the body is counted, not kept (`truncated`). Past `max`
 * bytes (or a Content-Length saying so) it stops reading (`stopped`): the caller answers and closes the connection.
 * @returns {Promise<{ buf: Buffer, bytes: number, truncated: boolean, stopped: boolean }>}
 */
function readBody(req, keep, max) {
  return new Promise((resolve, reject) => {
    let chunks = [];
    let bytes = 0;
    const declared = Number(req.headers['content-length']);
    const stop = (counted) => {
      req.off('data', onData);
      req.pause();
      resolve({ buf: Buffer.alloc(0), bytes: counted, truncated: true, stopped: true });
    };
    const onData = (chunk) => {
      bytes += chunk.length;
      if (bytes > max) return stop(bytes);
      if (bytes <= keep) chunks.push(chunk);
      else chunks = [];
    };
    if (declared > max) return stop(declared);
    req.on('data', onData);
    req.on('end', () => resolve({ buf: Buffer.concat(chunks), bytes, truncated: bytes > keep, stopped: false }));
    req.on('error', reject);
  });
}

/** Answers and closes the connection: what is left of a body too large to read is never read. */
function sendAndClose(res, req, status, value) {
  res.once('finish', () => req.destroy());
  sendJson(res, req, status, value, { Connection: 'close' });
}

function parseJson(buf, truncated) {
  if (truncated) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(buf.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** GET /_/violations: the requests a correct client never sends, then the messages off the tracking plan. */
const violationsOf = (state) => [...state.requests.filter((r) => r.violation), ...state.planViolations];

/**
 * Checks the write key: an Authorization header, when present, must be exactly
 * `Basic base64(writeKey + ":")`; otherwise the body's `writeKey` must match.
 * @returns {{ ok: boolean, auth: 'basic' | 'body' | 'none' }}
 */
function checkAuth(req, body, writeKey) {
  const header = req.headers.authorization;
  if (header) {
    const m = /^Basic\s+(\S+)\s*$/i.exec(header);
    const decoded = m ? Buffer.from(m[1], 'base64').toString('utf8') : null;
    return { ok: writeKey === null || decoded === `${writeKey}:`, auth: 'basic' };
  }
  const bodyKey = isObject(body) ? body.writeKey : undefined;
  if (typeof bodyKey === 'string') return { ok: writeKey === null || bodyKey === writeKey, auth: 'body' };
  return { ok: writeKey === null, auth: 'none' };
}

/** Pulls the messages out of a parsed body; null when the shape is wrong. */
function extractMessages(kind, body) {
  if (!isObject(body)) return null;
  if (kind === 'batch') {
    if (!Array.isArray(body.batch) || !body.batch.every(isObject)) return null;
    return body.batch;
  }
  const { writeKey: _drop, ...message } = body;
  if (message.type === undefined) message.type = kind;
  return [message];
}

const jsonBytes = (value) => Buffer.byteLength(JSON.stringify(value), 'utf8');

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-](\d{2}):(\d{2}))$/;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * True for an RFC 3339 date-time that names a real instant: `YYYY-MM-DDTHH:MM:SS(.fff)?(Z|±HH:MM)`
 * with a 4-digit year. Date.parse alone is both too broad (extended years such as +275760-09-13,
 * free-form text) and too lenient (V8 takes 2024-02-30 and 24:00), so the fields are checked too.
 * @param {unknown} value
 */
export function isIsoDateTime(value) {
  const m = typeof value === 'string' ? ISO_DATE_TIME.exec(value) : null;
  if (!m) return false;
  // A `Z` leaves the offset groups undefined: offset 00:00.
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = m.slice(1).map((d) => Number(d ?? 0));
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : MONTH_DAYS[month - 1];
  return day >= 1 && day <= days && hour < 24 && minute < 60 && second < 60
    && offsetHours < 24 && offsetMinutes < 60 && Number.isFinite(Date.parse(value));
}

/** A value as a problem text quotes it: JSON, cut short. */
function shown(value) {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * What the service refuses in one message (spec 000 sections 2.3-2.5; CONTRACT section 4): a list of
 * `{ field, problem }`, empty for a message it processes. "Present" means the key is there, so a
 * JSON `null` where a string or an object belongs is malformed too.
 * @param {Record<string, unknown>} m
 * @returns {{ field: string, problem: string }[]}
 */
export function messageProblems(m) {
  const problems = [];
  const bad = (field, problem, value) => problems.push({ field, problem: `${problem} (got ${shown(value)})` });
  const isId = (v) => typeof v === 'string' && v !== '';
  if (!MESSAGE_TYPES.includes(m.type)) bad('type', `must be one of ${MESSAGE_TYPES.join(', ')}`, m.type);
  if (!isId(m.messageId)) bad('messageId', 'must be a non-empty string', m.messageId);
  if (!isIsoDateTime(m.timestamp)) bad('timestamp', 'must be an ISO 8601 date-time such as 2024-05-01T12:00:00.000Z', m.timestamp);
  if (m.sentAt !== undefined && !isIsoDateTime(m.sentAt)) bad('sentAt', 'must be an ISO 8601 date-time', m.sentAt);
  // A null id is an absent one: analytics.js (and the service's own SDK, a fork of it) sends `userId: null`
  // before identify, and the service takes it.
  const ids = ['userId', 'anonymousId'].filter((k) => m[k] != null);
  for (const k of ids) if (typeof m[k] !== 'string') bad(k, 'must be a string', m[k]);
  if (ids.every((k) => typeof m[k] === 'string') && !ids.some((k) => isId(m[k]))) {
    bad('userId', '(or anonymousId) is required as a non-empty string', m.userId ?? m.anonymousId);
  }
  if (m.integrations !== undefined) {
    if (!isObject(m.integrations)) bad('integrations', 'must be an object mapping destination names to booleans', m.integrations);
    else for (const [name, on] of Object.entries(m.integrations)) {
      if (typeof on !== 'boolean') bad(`integrations.${name}`, 'must be a boolean (spec 000 section 2.3)', on);
    }
  }
  for (const k of ['context', 'properties', 'traits']) if (m[k] !== undefined && !isObject(m[k])) bad(k, 'must be an object', m[k]);
  if (m.type === 'track' && !isId(m.event)) bad('event', 'is required on a track: a non-empty string', m.event);
  if (m.type === 'group' && typeof m.groupId !== 'string') bad('groupId', 'is required on a group: a string', m.groupId);
  if (m.objectTypeId !== undefined && !(typeof m.objectTypeId === 'string' && /^-?\d+$/.test(m.objectTypeId))) {
    bad('objectTypeId', 'must be a string holding an integer', m.objectTypeId);
  }
  return problems;
}

/** How a problem text names message `index` of a request: its place and its messageId. */
function messageName(kind, index, m) {
  const place = kind === 'batch' ? `batch[${index}]` : 'message';
  return `${place} (${m.messageId === undefined ? 'no messageId' : `messageId ${shown(m.messageId)}`})`;
}

/**
 * Every malformed part of a well-shaped request: the body's `sentAt`, then each message's problems.
 * @returns {{ index: number|null, messageId: unknown, field: string, problem: string, text: string }[]}
 */
export function requestProblems(kind, body, messages) {
  const found = [];
  if (kind === 'batch' && body.sentAt !== undefined && !isIsoDateTime(body.sentAt)) {
    const problem = `must be an ISO 8601 date-time (got ${shown(body.sentAt)})`;
    found.push({ index: null, messageId: null, field: 'sentAt', problem, text: `body: sentAt ${problem}` });
  }
  messages.forEach((m, index) => {
    for (const { field, problem } of messageProblems(m)) {
      found.push({ index, messageId: m.messageId ?? null, field, problem, text: `${messageName(kind, index, m)}: ${field} ${problem}` });
    }
  });
  return found;
}

function emptyStats() {
  return { requests: 0, messages: 0, bytes: 0, retries: 0, rejected: 0, overLimit: 0, faults: 0, violations: 0 };
}

function createState() {
  return {
    requests: [],
    planViolations: [],
    messages: [],
    stats: emptyStats(),
    fault: { status: null, delay: null, poison: null },
    seen: new Set(),
    nextId: 1,
    // Bytes held: the bodies of the records that keep their messages, and the accepted messages (see maxBytes).
    sizes: new WeakMap(),
    requestBytes: 0,
    messageBytes: 0,
  };
}

/** Drops the oldest request records past `maxRequests` or `maxBytes`. */
function trimRequests(state, opts) {
  while (state.requests.length > 0 && (state.requests.length > opts.maxRequests || state.requestBytes > opts.maxBytes)) {
    state.requestBytes -= state.sizes.get(state.requests.shift()) || 0;
  }
}

/** Drops the oldest accepted messages past `maxMessages` or `maxBytes`. */
function trimMessages(state, opts) {
  let drop = 0;
  while (drop < state.messages.length && (state.messages.length - drop > opts.maxMessages || state.messageBytes > opts.maxBytes)) {
    state.messageBytes -= state.sizes.get(state.messages[drop]) || 0;
    drop += 1;
  }
  if (drop) state.messages.splice(0, drop);
}

/** The longest messageId remembered as seen: a longer one is no id the library makes (a ULID), and is never a retry. */
const SEEN_ID_MAX = 128;

/**
 * Remembers `ids` as seen (`retryOf` names a message sent again), the latest `maxMessages` of them, none longer than
 * `SEEN_ID_MAX` characters: any website can post to /v1/*, so the set is bounded (security-5 N4).
 */
function remember(state, ids, opts) {
  for (const id of ids) if (id.length <= SEEN_ID_MAX) state.seen.delete(id), state.seen.add(id);
  for (const id of state.seen) {
    if (state.seen.size <= opts.maxMessages) break;
    state.seen.delete(id);
  }
}

function resetState(state, { keepFaults = false } = {}) {
  state.requests.length = 0;
  state.messages.length = 0;
  state.planViolations.length = 0;
  state.requestBytes = state.messageBytes = 0;
  Object.assign(state.stats, emptyStats());
  if (!keepFaults) state.fault.status = state.fault.delay = state.fault.poison = null;
  state.seen.clear();
}

const isCount = (n) => Number.isInteger(n) && n > 0;

/**
 * Turns a `POST /_/fault` body into the fault state; throws a message for the 400 answer.
 * @returns {{ status: object|null, delay: object|null, poison: object|null }}
 */
export function parseFault(input) {
  if (!isObject(input)) throw new Error('fault must be a JSON object');
  const { status, times, retryAfter, headers, delayMs, poisonEvent, poisonStatus } = input;
  if (times !== undefined && times !== null && !isCount(times)) throw new Error('times must be a positive integer');
  const remaining = times ?? null;
  const fault = { status: null, delay: null, poison: null };
  if (status !== undefined && status !== null) {
    if (!Number.isInteger(status) || status < 200 || status > 599) throw new Error('status must be an HTTP status 200-599');
    if (retryAfter !== undefined && retryAfter !== null && typeof retryAfter !== 'number' && typeof retryAfter !== 'string') {
      throw new Error('retryAfter must be a number of seconds or an HTTP date');
    }
    if (headers !== undefined && headers !== null
      && !(isObject(headers) && Object.entries(headers).every(([k, v]) => /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k) && typeof v === 'string' && !/[\r\n]/.test(v)))) {
      throw new Error('headers must be an object of header names to string values');
    }
    fault.status = { code: status, remaining, retryAfter: retryAfter == null ? null : String(retryAfter), ...(headers && { headers: { ...headers } }) };
  }
  if (delayMs !== undefined && delayMs !== null) {
    if (typeof delayMs !== 'number' || !(delayMs >= 0) || delayMs > MAX_DELAY_MS) throw new Error(`delayMs must be 0-${MAX_DELAY_MS}`);
    fault.delay = { ms: delayMs, remaining };
  }
  if (poisonEvent !== undefined && poisonEvent !== null) {
    if (typeof poisonEvent !== 'string' || !poisonEvent) throw new Error('poisonEvent must be a non-empty string');
    const code = poisonStatus ?? 400;
    if (!Number.isInteger(code) || code < 200 || code > 599) throw new Error('poisonStatus must be an HTTP status 200-599');
    fault.poison = { event: poisonEvent, status: code };
  }
  return fault;
}

/** Takes one use of a counted fault; returns the fault if it applied. */
function consume(fault, key) {
  const f = fault[key];
  if (!f) return null;
  if (f.remaining !== null) {
    f.remaining -= 1;
    if (f.remaining <= 0) fault[key] = null;
  }
  return f;
}

/** Server-Sent Events fan-out to inspector pages. */
function createHub() {
  const clients = new Set();
  const heartbeat = setInterval(() => {
    for (const res of clients) res.write(': ping\n\n');
  }, HEARTBEAT_MS);
  heartbeat.unref();
  return {
    add(res) {
      clients.add(res);
      res.on('close', () => clients.delete(res));
    },
    send(res, event, data) {
      if (res.writableLength > MAX_STREAM_BUFFER) {
        clients.delete(res);
        res.destroy();
        return;
      }
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
    broadcast(event, data) {
      for (const res of clients) this.send(res, event, data);
    },
    close() {
      clearInterval(heartbeat);
      for (const res of clients) res.end();
      clients.clear();
    },
  };
}

/** A sleep that `cancelAll` ends early, so close() never waits for an injected delay. */
function createSleeper() {
  const pending = new Set();
  return {
    sleep(ms) {
      return new Promise((resolve) => {
        const entry = { resolve, timer: setTimeout(() => done(), ms) };
        const done = () => {
          clearTimeout(entry.timer);
          pending.delete(entry);
          resolve();
        };
        entry.resolve = done;
        pending.add(entry);
      });
    },
    cancelAll() {
      for (const entry of [...pending]) entry.resolve();
    },
  };
}

/** Appends JSON lines in arrival order; `flush()` waits for the writes so far. */
function createLog(logFile) {
  if (!logFile) return { append: async () => {}, flush: async () => {} };
  fs.mkdirSync(path.dirname(path.resolve(logFile)), { recursive: true });
  let chain = Promise.resolve();
  return {
    append(lines) {
      const text = lines.map((l) => JSON.stringify(l) + '\n').join('');
      chain = chain.then(() => fs.promises.appendFile(logFile, text)).catch((err) => {
        console.error(`svc-analytics collector: cannot write ${logFile}: ${err.message}`);
      });
      return chain;
    },
    flush: () => chain,
  };
}

const MESSAGE_FILTERS = ['type', 'event', 'name', 'userId', 'anonymousId', 'messageId', 'groupId'];

function messageFilter(params) {
  const wanted = MESSAGE_FILTERS.filter((k) => params.has(k)).map((k) => [k, params.get(k)]);
  return (m) => wanted.every(([k, v]) => String(m[k]) === v);
}

function createIngest(ctx) {
  const { state, opts, hub, log, sleeper } = ctx;

  function record(req, bytes) {
    const rec = {
      id: state.nextId++,
      at: Date.now(),
      method: req.method,
      path: new URL(req.url, 'http://x').pathname,
      status: null,
      bytes,
      contentType: req.headers['content-type'] || null,
      auth: 'none',
      origin: req.headers.origin || null,
      overLimit: false,
      fault: null,
      aborted: false,
      error: null,
      malformed: [],
      violation: null,
      durationMs: null,
      messageIds: [],
      messages: [],
      retryOf: [],
    };
    state.requests.push(rec);
    trimRequests(state, opts);
    state.stats.requests += 1;
    state.stats.bytes += bytes;
    return rec;
  }

  function noteMessages(rec, messages) {
    rec.messages = messages;
    rec.messageIds = messages.map((m) => m.messageId).filter((id) => typeof id === 'string');
    rec.retryOf = rec.messageIds.filter((id) => state.seen.has(id));
    remember(state, rec.messageIds, opts);
    state.stats.retries += rec.retryOf.length;
  }

  // Outcomes that are violations: what a correct client never sends.
  const malformed = (error, problems = []) => ({ status: 400, error, malformed: problems, violation: { kind: 'malformed', reason: error } });
  // The service answers 200 to an over-limit request and drops it, so only the record says why.
  const overLimit = (which, reason) => ({ status: 200, overLimit: which, violation: { kind: 'over-limit', reason: `${reason} (answered 200, dropped)` } });

  /** Decides the answer: injected faults, readable JSON, auth, body size, shape, poison, message size, malformed messages. */
  async function decide(kind, req, rec, body, parsed, clientGone) {
    // Noted before anything can fail, so a later re-delivery is recognised as a retry.
    const messages = parsed.ok ? extractMessages(kind, parsed.value) : null;
    if (messages) noteMessages(rec, messages);
    const bodyLimit = kind === 'batch' ? BATCH_LIMIT : MESSAGE_LIMIT;
    const overBody = body.bytes > bodyLimit;
    // A body over the limit is not kept, so a write key in it is not read: only an Authorization header is checked.
    const auth = overBody && !req.headers.authorization ? { ok: true, auth: 'none' } : checkAuth(req, parsed.value, opts.writeKey);
    rec.auth = auth.auth;
    const delay = consume(state.fault, 'delay');
    if (delay) {
      rec.fault = 'slow';
      ctx.changed(rec);
      await sleeper.sleep(delay.ms);
      if (clientGone() || ctx.closed) return { status: 0, error: 'client went away before the answer' };
    }
    const failure = consume(state.fault, 'status');
    if (failure) {
      rec.fault = 'status';
      const headers = { ...(failure.retryAfter !== null ? { 'Retry-After': failure.retryAfter } : {}), ...(failure.headers || {}) };
      return { status: failure.code, error: `injected failure ${failure.code}`, headers };
    }
    if (!parsed.ok && !overBody) return malformed('body is not valid JSON');
    if (!auth.ok) {
      const error = auth.auth === 'none' ? 'missing write key' : 'invalid write key';
      return { status: 401, error, violation: { kind: 'auth', reason: error } };
    }
    if (overBody) {
      const which = kind === 'batch' ? 'batch' : 'message';
      return overLimit(which, `body of ${body.bytes} bytes is over the ${bodyLimit}-byte ${which} limit`);
    }
    if (!messages) return malformed(kind === 'batch' ? 'body must be an object with a "batch" array of objects' : 'body must be a JSON object');
    const poison = state.fault.poison;
    if (poison && messages.some((m) => m.event === poison.event)) {
      rec.fault = 'poison';
      return { status: poison.status, error: `poisoned event "${poison.event}"` };
    }
    const big = messages.findIndex((m) => jsonBytes(m) > MESSAGE_LIMIT);
    if (big >= 0) {
      const m = messages[big];
      return overLimit('message', `${messageName(kind, big, m)} is ${jsonBytes(m)} bytes, over the ${MESSAGE_LIMIT}-byte message limit`);
    }
    // The whole request is refused for one bad message: the service accepts nothing from it.
    const problems = requestProblems(kind, parsed.value, messages);
    if (problems.length) {
      const more = problems.length > 1 ? ` (and ${problems.length - 1} more: see "malformed" in /_/requests)` : '';
      return malformed(`malformed ${problems[0].text}${more}`, problems);
    }
    return { status: 200, accept: messages };
  }

  async function accept(rec, messages) {
    const receivedAt = new Date().toISOString();
    for (const m of messages) {
      const stored = { ...m, _requestId: rec.id, _receivedAt: receivedAt };
      const size = jsonBytes(m);
      state.sizes.set(stored, size);
      state.messageBytes += size;
      state.messages.push(stored);
    }
    trimMessages(state, opts);
    state.stats.messages += messages.length;
    if (opts.plan) {
      rec.plan = planEntries(opts.plan, rec, messages, opts.plan.describe);
      state.planViolations.push(...rec.plan);
      // (bounded as the messages are: any website can post to /v1/*, security-5 N4)
      state.planViolations.splice(0, state.planViolations.length - opts.maxMessages);
    }
    await log.append(messages.map((message) => ({ receivedAt, requestId: rec.id, message })));
  }

  function tally(rec, outcome) {
    if (outcome.overLimit) state.stats.overLimit += 1;
    if (rec.fault && rec.fault !== 'slow') state.stats.faults += 1;
    if (outcome.status >= 400) state.stats.rejected += 1;
    if (outcome.violation) state.stats.violations += 1;
  }

  function logLine(rec, count) {
    if (opts.quiet) return;
    const flags = [rec.auth, rec.overLimit && `over ${rec.overLimit} limit`, rec.fault && `fault:${rec.fault}`,
      rec.retryOf.length && `retry of ${rec.retryOf.length}`, rec.error].filter(Boolean).join(', ');
    console.log(`${new Date(rec.at).toISOString()} ${rec.method} ${rec.path} ${rec.status} ${count ?? '?'} msg ${rec.bytes} B (${flags})`);
  }

  return async function ingest(kind, req, res) {
    let gone = false;
    res.on('close', () => { if (!res.writableFinished) gone = true; });
    const limit = kind === 'batch' ? BATCH_LIMIT : MESSAGE_LIMIT;
    const body = await readBody(req, limit, MAX_BODY_READ);
    const rec = record(req, body.bytes);
    ctx.changed();
    const parsed = parseJson(body.buf, body.truncated);
    const outcome = body.stopped
      ? { ...overLimit(kind === 'batch' ? 'batch' : 'message', `body of ${body.bytes} bytes or more is over the ${MAX_BODY_READ}-byte read limit; not read further`), status: 413, error: `body over ${MAX_BODY_READ} bytes` }
      : await decide(kind, req, rec, body, parsed, () => gone);
    // An over-limit request keeps its messageIds, not its messages: nothing of it is processed.
    if (outcome.overLimit) rec.messages = [];
    rec.status = outcome.status;
    rec.overLimit = outcome.overLimit || false;
    rec.error = outcome.error || null;
    rec.malformed = outcome.malformed || [];
    rec.violation = outcome.violation || null;
    rec.aborted = outcome.status === 0;
    if (outcome.accept) await accept(rec, outcome.accept);
    rec.durationMs = Date.now() - rec.at;
    if (rec.messages.length && state.requests.includes(rec)) {
      state.sizes.set(rec, body.bytes);
      state.requestBytes += body.bytes;
      trimRequests(state, opts);
    }
    tally(rec, outcome);
    logLine(rec, outcome.overLimit ? (rec.messageIds.length || null) : rec.messages.length);
    ctx.changed(rec);
    if (outcome.status === 0) return;
    if (body.stopped) return sendAndClose(res, req, outcome.status, { error: outcome.error });
    if (outcome.status >= 400) sendJson(res, req, outcome.status, { error: outcome.error }, outcome.headers);
    else sendJson(res, req, outcome.status, { success: true });
  };
}

function createApi(ctx) {
  const { state, hub, opts, waiters } = ctx;

  function waitForMessages(params) {
    const match = messageFilter(params);
    const select = () => state.messages.filter(match);
    const min = Number(params.get('min') || 0);
    const timeout = Math.min(Number(params.get('timeout') || 5000), MAX_WAIT_MS);
    if (!(min > 0) || select().length >= min) return Promise.resolve(select());
    return new Promise((resolve) => {
      const waiter = () => {
        if (select().length < min && !ctx.closed) return;
        clearTimeout(timer);
        waiters.delete(waiter);
        resolve(select());
      };
      const timer = setTimeout(() => { waiters.delete(waiter); resolve(select()); }, timeout);
      waiters.add(waiter);
    });
  }

  function stream(req, res) {
    res.writeHead(200, { ...res.svcCors, 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    res.write('retry: 2000\n\n');
    hub.add(res);
    hub.send(res, 'snapshot', { requests: state.requests.slice(-SNAPSHOT_REQUESTS), stats: state.stats, fault: state.fault, info: info() });
  }

  function info() {
    return { messageLimit: MESSAGE_LIMIT, batchLimit: BATCH_LIMIT, anyKey: opts.writeKey === null, logFile: opts.logFile, plan: opts.plan ? opts.plan.file || 'given' : null };
  }

  async function postFault(req, res) {
    const body = await readBody(req, MAX_CONTROL_BODY, MAX_CONTROL_BODY);
    if (body.stopped) return sendAndClose(res, req, 413, { error: `body over ${MAX_CONTROL_BODY} bytes` });
    const parsed = parseJson(body.buf.length ? body.buf : Buffer.from('{}'), body.truncated);
    try {
      if (!parsed.ok) throw new Error('body is not valid JSON');
      Object.assign(state.fault, parseFault(parsed.value));
    } catch (err) {
      return sendJson(res, req, 400, { error: err.message });
    }
    ctx.changed();
    sendJson(res, req, 200, state.fault);
  }

  async function reset(req, res) {
    const body = await readBody(req, 0, MAX_CONTROL_BODY);
    if (body.stopped) return sendAndClose(res, req, 413, { error: `body over ${MAX_CONTROL_BODY} bytes` });
    resetState(state);
    hub.broadcast('reset', { stats: state.stats, fault: state.fault });
    sendJson(res, req, 200, { ok: true });
  }

  return async function api(route, req, res, url) {
    const key = `${req.method} ${route}`;
    switch (key) {
      case 'GET /_/requests': return sendJson(res, req, 200, state.requests);
      case 'GET /_/violations': return sendJson(res, req, 200, violationsOf(state));
      case 'GET /_/messages': return sendJson(res, req, 200, await waitForMessages(url.searchParams));
      case 'GET /_/stats': return sendJson(res, req, 200, state.stats);
      case 'GET /_/fault': return sendJson(res, req, 200, state.fault);
      case 'GET /_/info': return sendJson(res, req, 200, info());
      case 'GET /_/stream': return stream(req, res);
      case 'POST /_/fault': return postFault(req, res);
      case 'POST /_/reset': return reset(req, res);
      default: return sendJson(res, req, 404, { error: `no such endpoint: ${req.method} ${route}` });
    }
  };
}

async function serveInspector(req, res) {
  try {
    // Not in another site's frame (its buttons reset the collector and inject faults).
    send(res, req, 200, await fs.promises.readFile(INSPECTOR_FILE), 'text/html; charset=utf-8', {
      'Content-Security-Policy': "frame-ancestors 'self'",
      'X-Frame-Options': 'SAMEORIGIN',
    });
  } catch {
    send(res, req, 500, 'inspector.html is missing', 'text/plain; charset=utf-8');
  }
}

function createHandler(ctx) {
  const ingest = createIngest(ctx);
  const api = createApi(ctx);
  const { gate } = ctx;
  return async (req, res) => {
    const url = new URL(req.url, 'http://collector');
    const route = url.pathname.replace(/\/+$/, '') || '/';
    const single = /^\/v1\/([a-z]+)$/.exec(route);
    const kind = single && (single[1] === 'batch' || MESSAGE_TYPES.includes(single[1])) ? single[1] : null;
    // Ingestion answers any origin, as the real API does.
    if (kind) {
      res.svcCors = corsHeaders(req);
      if (req.method === 'OPTIONS') {
        res.writeHead(204, { ...res.svcCors, 'Content-Length': '0' });
        return res.end();
      }
      if (req.method !== 'POST') return sendJson(res, req, 405, { error: 'use POST' }, { Allow: 'POST, OPTIONS' });
      return ingest(kind, req, res);
    }
    if (route === '/favicon.ico') return send(res, req, 204, '', 'image/x-icon');
    // Everything else (the inspector, the control API, unknown paths): the inspector's own origin, the allowed ones.
    const trust = gate.check(req);
    if (!trust.ok) {
      res.svcCors = { Vary: 'Origin' };
      return sendJson(res, req, 403, { error: trust.error });
    }
    res.svcCors = controlCors(req, trust.origin);
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...res.svcCors, 'Content-Length': '0' });
      return res.end();
    }
    // A browser's POST must be JSON: with any other type (text/plain, a form, no body) it would be a CORS-simple
    // request, sent without asking first.
    if (req.method === 'POST' && (req.headers.origin !== undefined || req.headers['sec-fetch-site'] !== undefined)
      && !/^application\/json\s*(;|$)/i.test(req.headers['content-type'] || '')) {
      return sendJson(res, req, 415, { error: 'the control API takes POSTs from a browser only as Content-Type: application/json' });
    }
    if (route.startsWith('/_/')) return api(route, req, res, url);
    if (route === '/' && (req.method === 'GET' || req.method === 'HEAD')) return serveInspector(req, res);
    sendJson(res, req, 404, { error: `no such endpoint: ${req.method} ${url.pathname}` });
  };
}

function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    const onError = (err) => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(server.address().port);
    });
  });
}

/** `http://host:port`, with IPv6 hosts bracketed. */
export function hostUrl(host, port) {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Starts a local collector that imitates the Data Pipelines API.
 * @param {object} [options]
 * @param {number} [options.port=8787] 0 picks a free port.
 * @param {string} [options.host='127.0.0.1']
 * @param {string|null} [options.writeKey='dev-write-key'] null accepts any key (and none).
 * @param {string|null} [options.logFile=null] JSON-lines file of accepted messages; directories are created.
 * @param {boolean} [options.quiet=true] false logs one line per ingestion request to stdout.
 * @param {number} [options.maxRequests=10000] oldest request records are dropped past this.
 * @param {number} [options.maxMessages=100000] oldest accepted messages are dropped from memory past this; so are
 *   the oldest plan violations, and the oldest of the messageIds remembered to tell a retry.
 * @param {number} [options.maxBytes=134217728] oldest request records, and oldest accepted messages, are dropped past
 *   this many bytes of JSON held (each store counted on its own: 128 MB).
 * @param {string[]} [options.allowOrigins=[]] browser origins, besides the inspector's own, that may use the
 *   inspector and the control API (/_/*): CONTRACT section 6. Ingestion (/v1/*) answers any origin.
 * @param {string|object|null} [options.plan=null] a tracking plan (a file path or the plan object, CONTRACT section 7):
 *   every accepted message is checked; a plan that cannot be read or is not valid makes this reject, naming why.
 * @returns {Promise<{ url: string, port: number, close(): Promise<void>, state: object, reset(): void, setFault(fault: object): object,
 *   violations(): object[], clear(): void, onChange(listener: () => void): () => void }>}
 *   `state.messages` holds the accepted messages in arrival order (what GET /_/messages answers), `state.requests`
 *   the request records; `violations()` is GET /_/violations; `clear()` forgets requests, messages and counters but
 *   keeps the faults (`reset()` forgets those too); `onChange(listener)` calls `listener` after every change (a request
 *   arrived or was answered, a fault was set, a reset) until the function it returns is called; `allowOrigin(origin)`
 *   adds an origin to `allowOrigins` (the demo's, once its port is known) and returns it normalised.
 */
export async function startCollector({
  port = 8787,
  host = '127.0.0.1',
  writeKey = 'dev-write-key',
  logFile = null,
  quiet = true,
  maxRequests = 10000,
  maxMessages = 100000,
  maxBytes = 128 * 1024 * 1024,
  allowOrigins = [],
  plan = null,
} = {}) {
  const gate = createGate({ host, allowOrigins });
  const checker = plan ? { ...(await loadPlan(plan)), describe: (await planModule()).describeViolation } : null;
  const state = createState();
  const hub = createHub();
  const waiters = new Set();
  const ctx = {
    state, hub, waiters, gate,
    opts: { writeKey, logFile: logFile && path.resolve(logFile), quiet, maxRequests, maxMessages, maxBytes, plan: checker },
    log: createLog(logFile),
    sleeper: createSleeper(),
    closed: false,
    changed(rec) {
      if (rec) hub.broadcast('request', rec);
      hub.broadcast('stats', state.stats);
      hub.broadcast('fault', state.fault);
      for (const w of [...waiters]) w();
    },
  };
  const handler = createHandler(ctx);
  const server = http.createServer((req, res) => {
    handler(req, res).catch((err) => {
      if (!quiet) console.error(err);
      sendJson(res, req, 500, { error: String(err && err.message || err) });
    });
  });
  let actualPort;
  try {
    actualPort = await listen(server, port, host);
  } catch (err) {
    hub.close();
    throw err;
  }

  async function close() {
    if (ctx.closed) return;
    ctx.closed = true;
    ctx.sleeper.cancelAll();
    for (const w of [...waiters]) w();
    hub.close();
    const done = new Promise((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await done;
    await ctx.log.flush();
  }

  return {
    url: hostUrl(host, actualPort),
    port: actualPort,
    close,
    state,
    reset() {
      resetState(state);
      hub.broadcast('reset', { stats: state.stats, fault: state.fault });
    },
    setFault(fault) {
      Object.assign(state.fault, parseFault(fault));
      ctx.changed();
      return state.fault;
    },
    violations() {
      return violationsOf(state);
    },
    clear() {
      resetState(state, { keepFaults: true });
      hub.broadcast('reset', { stats: state.stats, fault: state.fault });
      ctx.changed();
    },
    allowOrigin(origin) {
      const normal = normalizeOrigin(origin);
      gate.allowed.add(normal);
      return normal;
    },
    onChange(listener) {
      const waiter = () => {
        try {
          listener();
        } catch {
          // a listener's failure is its own business; the collector carries on
        }
      };
      waiters.add(waiter);
      return () => void waiters.delete(waiter);
    },
  };
}
