// The IIFE bundle (dist/analytics.min.js): takes over the snippet's stub, or stands alone.
import { createAnalytics } from '../api/analytics';
import { addHelpers } from '../helpers/add-helpers';
import { bindingOf, bufferIO, othersWaiting, readBuffer, takeOwn, type BufferedCall } from '../stub/buffer';
import type { takeOverBuffer } from '../stub/adopt';
import type { DebugTools } from '../debug/debug';
import { createEdgeTransforms, type ExtendChunk } from '../extend/edge';
import type { LinkTools } from '../identity/link';
import type { Sources } from '../sources';
import type { PlanCheck } from '../plan/browser-check';
import { analyticsError, describe, type AnalyticsError } from '../message/errors';
import { scriptUrl } from './trusted-types';
import { byteLength, copyJSON, ownKeys, sanitize, stringify, timestamp, tooLarge } from '../message/validate';
import { isObject, ownOptions } from '../message/boundary';
import { over } from '../message/message';
import type { Lib } from '../extend/lib';
import { linked, useAdoption } from '../identity/link';
import type { LoadOptions } from '../types';

/** Loads a chunk that lives next to the bundle, as the bundle loads its own (see `script` below). */
export type ChunkLoader = <T>(file: string, sri: string, name: string, ok: (c: any) => unknown) => Promise<T>;

/** What the lazy chunk (dist/analytics.debug.min.js, src/entry/debug-browser.ts) leaves for the bundle. */
export interface LazyChunk {
  tools: DebugTools;
  links: LinkTools;
  /** The take-over of other pages' calls from the stub's buffer (src/stub/adopt.ts). */
  takeOverBuffer: typeof takeOverBuffer;
  /** Loads the tracking-plan chunk (dist/analytics.plan.min.js, whose SRI hash this chunk carries) and starts its checker. */
  plan(load: ChunkLoader, plan: unknown, report: (e: AnalyticsError) => void): Promise<PlanCheck>;
}

// (`analytics`: what the page has there, as read below, then the API)
const w: { analytics?: { VERSION?: unknown; pid?: number } } = window;
const EARLY = /^(on|once|off|register|add(Source|Destination|Integration)Middleware)$/;
// What the page has at `window.analytics`: the snippet's stub (an array), the API of a copy of this bundle that ran
// first (an object of this page with a `VERSION` string), or else nothing, or an element named like it
// (`<img name="analytics">`, `<form id="analytics">`, `<iframe name="analytics">`, whose window may be of another
// origin, where reading any property throws): this bundle starts anyway and defines `window.analytics`.
const found = w.analytics;
const stub: (BufferedCall[] & { pid?: number; invoked?: number }) | undefined = Array.isArray(found) ? found : undefined;
// `document.currentScript` and `document.head` read through Document.prototype's getters: an element named like them
// (`<img name="currentScript" src="https://elsewhere/x.js">`) shadows them on `document` itself.
// (A DOM without them there, as a test DOM: read on `document`.)
const doc = (name: 'currentScript' | 'head') => (Object.getOwnPropertyDescriptor(Document.prototype, name)?.get || (() => document[name])).call(document);
// The chunks live next to this bundle: the middleware chunk (dist/analytics.extend.min.js: source middleware and
// plugins), inserted on the first `addSourceMiddleware` or `register` only; the sources chunk
// (dist/analytics.sources.min.js: trackLink/trackForm, trackPageViews' watch of URL changes), on the first of those
// calls or a load with `trackPageViews` only; the lazy chunk
// (dist/analytics.debug.min.js: the debug tools, the link and server-cookie tools, the take-over of other pages'
// calls from the stub's buffer), inserted on `debug(true)`, `linkDomains` or `serverCookies`, or when the buffer holds
// other pages' calls, only; and, for a `plan` load option only, the tracking-plan checker
// (dist/analytics.plan.min.js), which the lazy chunk loads through `script` with its own hash (so that no page without
// a plan carries it). Each is inserted with this script's nonce (a strict CSP allows it
// then), and, when this script is checked by Subresource Integrity, with the chunk's own hash (known at build time)
// and this script's `crossorigin`. A lazy chunk that failed to load is fetched again on the next need.
const self = doc('currentScript');
const src = self instanceof HTMLScriptElement ? self.src : '';
// Resolves with what the chunk `file` defined on window itself as `name` (an element of that name is not), if `ok`.
const script: ChunkLoader = (file, sri, name, ok) =>
  new Promise((loaded, failed) => {
    if (!src) return failed('no script URL to load it from');
    const s = document.createElement('script');
    // the bundle's file name replaced, its query kept (a version or a signature)
    s.src = scriptUrl(src.replace(/[^/?#]*(?=[?#]|$)/, file)); // (through the Trusted Types policy: ./trusted-types)
    s.nonce = self.nonce;
    if (self.integrity) (s.integrity = sri), (s.crossOrigin = self.crossOrigin);
    s.onload = () => {
      const c = Object.getOwnPropertyDescriptor(w, name)?.value;
      ok(c) ? loaded(c) : failed("not the library's chunk");
    };
    s.onerror = () => failed('the script failed to load');
    doc('head').appendChild(s);
  });
let chunk: Promise<LazyChunk> | undefined;
const loadChunk = () =>
  (chunk ||= script<LazyChunk>('analytics.debug.min.js', '__CHUNK_SRI__', 'svcAnalyticsDebug', (c) => c?.tools?.log).catch((e) => {
    chunk = undefined;
    throw e;
  }));
// (the middleware stage fetches it again itself after a failure: see src/extend/edge.ts)
// (given the bundle's message code as it comes: src/extend/lib.ts)
// (one fetch at a time: it starts as the bundle runs when the stub recorded a middleware or a plugin, see `takeOver`)
let extend: Promise<ExtendChunk> | undefined;
const loadExtend = () =>
  (extend ||= script<ExtendChunk>('analytics.extend.min.js', '__EXTEND_SRI__', 'svcAnalyticsExtend', (c) => c?.plugins?.hook && c.transforms && c.share && !c.share(shared)).catch((e) => {
    extend = undefined;
    throw e;
  }));
// (trackLink/trackForm and trackPageViews: src/api/lazy.ts fetches it again after a failure)
const loadSources = () => script<Sources>('analytics.sources.min.js', '__SOURCES_SRI__', 'svcAnalyticsSources', (c) => typeof c?.autotrack == 'function');
// What the middleware chunk uses of the bundle's message code (src/extend/lib.ts).
const shared: Lib = [analyticsError, byteLength, copyJSON, describe, isObject, over, ownKeys, sanitize, stringify, timestamp, tooLarge];
// Start-up runs in several short tasks (Total Blocking Time counts the part of a task over 50 ms): `later` runs a step
// in a task of its own, soon (a message: a timer may wait longer); one channel keeps the steps in order.
const steps: (() => void)[] = [];
const run = (step: () => void) => {
  try {
    step();
  } catch (e) {
    console.error('[svc-analytics] could not start', e); // never thrown into the page
  }
};
// A second copy of the bundle on the page leaves the first one in charge. (`instanceof Object`: an object of this
// page, whose properties can be read: not another window.)
if (!(found instanceof Object && typeof found.VERSION == 'string')) run(takeOver);

function takeOver() {
  // A page whose stub recorded a source middleware or a plugin: its first event waits for the middleware chunk, whose
  // fetch starts now rather than once the stages below are made (issue 28; a failure is the stage's to report).
  if (stub?.some((c) => c[0] == 'register' || c[0] == 'addSourceMiddleware')) loadExtend().catch(() => {});
  // (a page that took MessageChannel away: a timer)
  const channel = window.MessageChannel && new MessageChannel();
  const next = () => steps.length && run(steps.shift()!);
  if (channel) channel.port1.onmessage = next;
  const later = (step: () => void) => (steps.push(step), channel ? channel.port2.postMessage(0) : setTimeout(next));
  // A page hidden or left before start-up is done runs the rest of it at once: the calls made meanwhile are queued
  // then, and the next lifecycle event (pagehide follows a hide, and a hide follows pagehide) hands them over; the
  // stub's buffer is told then that this page is done with the calls it took (see `takeOverBuffer`).
  let taken: (() => void) | void;
  // (`waits`: what waits for the lazy chunk, see `afterChunk`)
  const waits = new Set<() => void>();
  const rest = (e: Event) => {
    waits.forEach((go) => go());
    while (steps.length) next();
    if (e.type == 'pagehide' || document.visibilityState == 'hidden') taken?.();
  };
  document.addEventListener('visibilitychange', rest);
  addEventListener('pagehide', rest);
  let report: (e: AnalyticsError) => void;
  const { api, load, replay, keep, helperDeps } = createAnalytics({
    debug: src ? () => loadChunk().then((c) => c.tools) : undefined,
    transforms: (settings, r) => createEdgeTransforms(settings, (report = r), loadExtend),
    tools: () => loadChunk().then((c) => c.links),
    plan: (plan, report) => loadChunk().then((c) => c.plan(script, plan, report)),
    sources: loadSources,
  });
  addHelpers(api, helperDeps);
  // Runs `then` (a `load`, or the take-over of the stub's buffer) once the lazy chunk came and what it brings is in
  // place (the adoption of a link's id, the take-over of other pages' calls), or could not load (reported), or at once
  // when the page is hidden or left meanwhile (`rest`): the calls that wait for it are never lost with the page.
  let whole: typeof takeOverBuffer | undefined;
  const afterChunk = (then: () => void) => {
    const go = () => waits.delete(go) && then();
    waits.add(go);
    loadChunk()
      .then(
        (c) => ((whole = c.takeOverBuffer), useAdoption(c.links.adopt)),
        (e) => report(analyticsError('chunk_unavailable', `linkDomains adoption, other pages' calls: ${describe(e)}`)),
      )
      .then(go);
  };
  // `linkDomains` on a page reached through a link (src/identity/link.ts `linked`): `load` waits for the adoption of
  // its id, so that the first message carries it; without the chunk the page keeps its own id.
  const pageLoad = api.load;
  api.load = (key, options) => (linked(options) ? afterChunk(() => pageLoad(key, options)) : pageLoad(key, options));
  const calls: BufferedCall[] = stub ? stub.splice(0) : [];
  w.analytics = api;
  // Pages that kept a reference to the stub array keep working: it gets the real methods too.
  if (stub) Object.assign(stub, api);
  // This page's recorded calls, and those of earlier pages whose bundle never came, kept in the stub's buffer: run by
  // `load`, before it starts automatic page views (or here, if the page has not called `load` yet). `load` starts in
  // the next task, and the calls run in a later one; the page's calls meanwhile wait for them.
  // As analytics.js: the page's handlers, source middleware and plugins are in place before any recorded call runs,
  // wherever the page made them (a middleware added after the snippet's page() still filters it).
  // Each recorded call of this page runs once: from memory while nothing may be stored (consent pending), and the
  // take-over of the stored buffer (other pages' calls too) once storing is allowed.
  const done = new Set<BufferedCall>();
  const once = (c: BufferedCall) => (done.has(c) ? undefined : (done.add(c), replay(c[0], c[1], c[2], c[3])));
  calls.filter((c) => EARLY.test(c[0])).forEach(once);
  // (the page's id: `invoked`; `pid` in the stubs of 0.1.0 and before, which set `invoked` to 1)
  const own = stub && (stub.pid || stub.invoked);
  const loadCall = calls.find((c) => c[0] == 'load');
  const bound = loadCall && bindingOf(loadCall[1]);
  // The take-over of other pages' calls (src/stub/adopt.ts) comes with the lazy chunk, fetched only when the buffer
  // holds calls of another page of this binding (`othersWaiting`): before `load` runs (the calls made meanwhile wait
  // for it, in order: the taken calls come first, as they would without the chunk); with the `consent` option, where
  // nothing is asked for before a grant, at the grant (this page's calls ran from memory already). A chunk that cannot
  // load, or a page hidden or left before it came, takes its own calls only (`takeOwn`): the other pages' stay in the
  // buffer for a later page; the failure is reported.
  let fetched = false;
  const waiting = () => !fetched && othersWaiting(readBuffer(), own, bound, Date.now());
  const takeStored = () => (taken = whole ? whole(bufferIO, calls, own, once, bound) : takeOwn(calls, own, once));
  const recorded = (storage: boolean) =>
    !storage ? calls.forEach((c) => c[0] != 'load' && once(c)) : waiting() ? ((fetched = true), afterChunk(takeStored)) : takeStored();
  // (kept now: a `load` the page makes itself before the recorded one runs, in the next task, replays them too)
  if (loadCall) {
    keep(recorded);
    const [key, options] = loadCall[1] as [string, LoadOptions?];
    const start = () => later(() => load(key, options, recorded, later));
    linked(options) || (!ownOptions(options).consent && waiting()) ? ((fetched = true), afterChunk(start)) : start();
  } else recorded(true);
}
