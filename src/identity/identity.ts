import type { JSONObject, JSONValue } from '../message/types';
import type { IdentityStorage } from '../types';
import { groupTraits } from '../message/message';
import { stringify } from '../message/validate';
import { isObject, randomBytes } from '../message/boundary';
import { hasDocument, workerStorage, type KeyValues } from '../offline/scope';

// `(hasDocument() ? localStorage : workerStorage())`: localStorage, or in a worker (none there) IndexedDB through
// offline/worker-storage.ts, set by the npm entry; written out at each use, so that the CDN bundle (pages only) reads `localStorage` as before.

// Taken when the bundle runs: a page that replaces JSON later cannot change what we read back.
const parse = JSON.parse;

/** Where each piece of identity persists: cookie and localStorage names. */
export const KEYS = {
  anonymousId: 'svc_anonymous_id',
  userId: 'svc_user_id',
  traits: 'svc_user_traits',
  groupId: 'svc_group_id',
  groupTraits: 'svc_group_properties',
  optOut: 'svc_opt_out',
};
// analytics.js names, adopted on first load so a site switching to us keeps its visitors.
const AJS = {
  anonymousId: 'ajs_anonymous_id',
  userId: 'ajs_user_id',
  traits: 'ajs_user_traits',
  groupId: 'ajs_group_id',
  groupTraits: 'ajs_group_properties',
  optOut: 'ajs_opt_out',
};
// What `forget` removes.
const IDENTITY = ['anonymousId', 'userId', 'traits', 'groupId', 'groupTraits'] as const;
// Objects live in localStorage only (a cookie is too small for them, and goes with every request).
const OBJECT_KEYS: Key[] = ['traits', 'groupTraits'];

type Key = keyof typeof KEYS;

/**
 * A random UUID v4: `crypto.randomUUID` (https pages only), else `getRandomValues`, else `Math.random` where a page
 * or a privacy setting made crypto throw.
 */
export function uuid(): string {
  try {
    return crypto.randomUUID();
  } catch {
    const bytes = randomBytes(31);
    let i = 0;
    return '10000000-1000-4000-8000-100000000000'.replace(/[018]/g, (c) => (+c ^ (bytes[i++] & (15 >> (+c / 4)))).toString(16));
  }
}

/** Reads a stored value that may be raw, URI-encoded, or JSON-encoded (analytics.js writes `"%22id%22"`). */
export function decode(raw: string | null | undefined): unknown {
  if (raw == null || raw === '') return undefined;
  let s = raw;
  try {
    s = decodeURIComponent(raw);
  } catch {
    // not URI-encoded
  }
  try {
    return parse(s);
  } catch {
    return s;
  }
}

/** The value of cookie `name` in a `document.cookie` string. */
export function readCookie(cookies: string, name: string): string | undefined {
  for (const part of cookies.split(/;\s*/)) {
    const i = part.indexOf('=');
    if (part.slice(0, i) == name) return part.slice(i + 1);
  }
  return undefined;
}

/** Candidate cookie domains for a host, widest first (`a.b.example.co.uk` → `co.uk`, `example.co.uk`, ...); none for IPs and single labels. */
export function domainCandidates(host: string): string[] {
  if (/^[\d.]+$|:/.test(host) || host.indexOf('.') < 0) return [];
  const labels = host.split('.');
  const out: string[] = [];
  for (let i = labels.length - 2; i >= 0; i--) out.push(labels.slice(i).join('.'));
  return out;
}

/** Options of the identity store. */
export interface IdentityOptions {
  storage?: IdentityStorage;
  cookie?: { domain?: string; maxage?: number };
  /** False: read what is stored, write nothing (not even a probe) until `_persist()` (consent pending). @default true */
  persist?: boolean;
  /** `serverCookies` (src/identity/server-cookies.ts): a cookie the server holds is not written again; a write is told. */
  server?: { _holds(name: string, value: string): boolean; _changed(domain?: string): void; _forget(): void };
}

// Each store is tried on its own: one the browser blocks (it throws) must not stop the other.
const attempt = <T>(fn: () => T): T | undefined => {
  try {
    return fn();
  } catch {
    return undefined; // blocked or full: the value lives in the other store, or in memory for this page
  }
};

/**
 * Where the identity is stored: a first-party cookie (top registrable domain, SameSite=Lax, Secure on https) mirrored
 * to localStorage, read from whichever survives; written only once writing is allowed (`_enable`).
 */
function createStores({ storage = 'cookie', cookie = {}, server }: IdentityOptions) {
  // Created at load, in a browser only.
  const useCookie = storage == 'cookie';
  const memory = storage == 'memory';
  // localStorage for writing (probed), once writing is allowed
  let ls: KeyValues | undefined;
  let writable = false;
  let domain = cookie.domain;

  const writeCookie = (name: string, value: string | undefined, d = domain) => {
    const secure = location.protocol == 'https:' ? '; Secure' : '';
    const age = value === undefined ? 0 : Math.round((cookie.maxage ?? 365) * 86400);
    const v = encodeURIComponent(value ?? '');
    // Rewritten by script, the server's cookie would get the script's capped lifetime (Safari: 7 days).
    if (age && server?._holds(name, v)) return;
    document.cookie = `${name}=${v}; path=/; max-age=${age}; SameSite=Lax${secure}${d ? '; domain=' + d : ''}`;
  };
  // The widest domain that accepts a cookie is the registrable one: subdomains then share the identity. (Probing
  // writes a cookie: only once writing is allowed.)
  const open = () => {
    if (ls || memory) return;
    // (probed: a localStorage that throws on writing is as good as none)
    ls = attempt(
      () => (
        (hasDocument() ? localStorage : workerStorage()).setItem('svc_probe', '1'),
        (hasDocument() ? localStorage : workerStorage()).removeItem('svc_probe'),
        hasDocument() ? localStorage : workerStorage()
      ),
    );
    if (useCookie && domain === undefined)
      domain = attempt(() =>
        domainCandidates(location.hostname).find((d) => {
          writeCookie('svc_probe', '1', d);
          const ok = readCookie(document.cookie, 'svc_probe') == '1';
          if (ok) writeCookie('svc_probe', undefined, d);
          return ok;
        }),
      );
  };
  // Whether a key has a cookie (besides localStorage).
  const inCookie = (key: Key) => useCookie && !OBJECT_KEYS.includes(key);
  // Reading writes nothing. (`jar`: document.cookie, read once for all the keys of a load: each read of it waits on
  // the browser)
  const read = (names: typeof KEYS, key: Key, jar = attempt(() => document.cookie)): unknown => {
    if (memory) return undefined;
    const v = inCookie(key) ? attempt(() => decode(readCookie(jar!, names[key]))) : undefined;
    return v !== undefined ? v : attempt(() => decode((hasDocument() ? localStorage : workerStorage()).getItem(names[key])));
  };
  const store = (key: Key, value: JSONValue) => {
    // Always JSON (the analytics.js form), so an id such as "42" or "1e3" reads back as the same string.
    const s = value == null ? undefined : stringify(value);
    // (the opt-out is no cookie the server sets: writing it asks the server nothing)
    if (inCookie(key)) attempt(() => (writeCookie(KEYS[key], s), key != 'optOut' && server?._changed(domain)));
    if (ls) attempt(() => (s === undefined ? ls!.removeItem(KEYS[key]) : ls!.setItem(KEYS[key], s)));
  };
  const write = (key: Key, value: JSONValue) => writable && store(key, value);
  // Removes a stored value wherever it may be, without probing: every candidate domain, and localStorage; under
  // analytics.js's name too (else the next load would adopt the identity just erased).
  const erase = (key: Key) => {
    if (memory) return;
    for (const names of [KEYS, AJS]) {
      for (const d of [undefined, domain, ...domainCandidates(location.hostname)]) attempt(() => writeCookie(names[key], undefined, d));
      attempt(() => (hasDocument() ? localStorage : workerStorage()).removeItem(names[key]));
    }
  };

  return {
    _read: read,
    _store: store,
    _write: write,
    _erase: erase,
    _open: open,
    _writable: () => writable,
    /** Starts (true) or stops (false) writing. */
    _enable: (on: boolean) => ((on && open()), (writable = on)),
  };
}

/**
 * The visitor's identity: anonymous id, user id and traits, kept in memory and persisted (see `createStores`).
 */
export function createIdentity(options: IdentityOptions = {}) {
  const { _read: read, _store: store, _write: write, _erase: erase, _open: open, _writable: writable, _enable } = createStores(options);
  const { server } = options;
  const state: { anonymousId: string; userId: string | null; traits: JSONObject; groupId: string | null; groupTraits: JSONObject } = {
    anonymousId: '',
    userId: null,
    traits: {},
    groupId: null,
    groupTraits: {},
  };
  const id = (v: unknown) => (v == null || v === '' ? null : String(v));
  const object = (v: unknown) => (isObject(v) ? v : {});
  const load = () => {
    const jar = attempt(() => document.cookie);
    const first = read(KEYS, 'anonymousId', jar) === undefined;
    const src = first ? AJS : KEYS;
    const aid = read(src, 'anonymousId', jar);
    state.anonymousId = typeof aid == 'string' && aid ? aid : state.anonymousId || uuid();
    // the ids and the objects (traits) besides
    for (const k of IDENTITY) if (k != 'anonymousId') (state as Record<Key, unknown>)[k] = (OBJECT_KEYS.includes(k) ? object : id)(read(src, k, jar));
    writeAll();
  };
  // Written back on every load, so a store that lost the values (a wiped cookie) holds them again; and, when writing
  // starts (consent granted), what this page holds in memory.
  const writeAll = () => IDENTITY.forEach((k) => write(k, state[k]));
  const enable = () => {
    _enable(true);
    writeAll();
  };
  load();
  if (options.persist ?? true) enable();

  return {
    _anonymousId: () => state.anonymousId,
    _userId: () => state.userId,
    _traits: () => state.traits,
    /** Re-reads storage (another tab may have identified or reset the visitor); nothing to re-read while not persisting. */
    _reload: () => writable() && load(),
    /** Re-reads storage whether or not this page persists (a discarded identify must not outlive a denial). */
    _restore: () => load(),
    /** Starts persisting (consent granted): what is in memory now is written, and kept written. */
    _persist: () => writable() || enable(),
    /** Removes the stored identity and stops persisting (consent withdrawn, opt-out); memory keeps it for this page. */
    _forget() {
      _enable(false);
      IDENTITY.forEach(erase);
      attempt(() => server?._forget());
    },
    /** The visitor's stored opt-out choice: true (out), false (opted in again), undefined (none). */
    _optedOut: (): boolean | undefined => {
      const v = read(KEYS, 'optOut');
      return v === undefined ? v : v === true || v === 1 || v === '1' || v === 'true';
    },
    /** Persists the visitor's choice (the one thing written whatever the consent: it is what they asked for). */
    _setOptOut(out: boolean) {
      open();
      store('optOut', out);
    },
    /** Stores the user id (if given) and the traits (as the identify message carries them: src/message/message.ts). */
    _identify(userId: string | undefined, traits: JSONObject) {
      if (userId) state.userId = userId;
      state.traits = traits;
      write('userId', state.userId);
      write('traits', traits);
    },
    _setAnonymousId(id: string) {
      write('anonymousId', (state.anonymousId = id));
    },
    _groupId: () => state.groupId,
    _groupTraits: () => state.groupTraits,
    /** Stores the group of a group call: its traits merge over the stored ones of the same group, as analytics.js. */
    _group(groupId: string, traits: JSONObject) {
      state.groupTraits = groupTraits(state, groupId, traits);
      write('groupId', (state.groupId = groupId));
      write('groupTraits', state.groupTraits);
    },
    /** Forgets the user id, traits and group, and starts a new anonymous id. */
    _reset() {
      state.userId = state.groupId = null;
      state.traits = state.groupTraits = {};
      for (const k of IDENTITY) if (k != 'anonymousId') write(k, null);
      write('anonymousId', (state.anonymousId = uuid()));
    },
  };
}

/** The identity store's interface. */
export type Identity = ReturnType<typeof createIdentity>;
