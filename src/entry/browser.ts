// The IIFE bundle (dist/analytics.min.js): takes over the snippet's stub, or stands alone.
import { createAnalytics } from '../api/analytics';
import { addHelpers } from '../helpers/add-helpers';
import { bindingOf, takeOverBuffer, type BufferedCall } from '../api/buffer';
import type { DebugTools } from '../debug/debug';
import type { PluginRunner } from '../extend/plugins';
import { createTransforms } from '../extend/transforms';

/** What the lazy chunk (dist/analytics.debug.min.js, src/entry/debug-browser.ts) leaves for the bundle. */
export interface LazyChunk {
  tools: DebugTools;
  plugins: PluginRunner;
}

const w = window as any;
const EARLY = /^(on|once|off|register|add(Source|Destination|Integration)Middleware)$/;
const stub = w.analytics;
// The lazy chunk (dist/analytics.debug.min.js: the debug tools and the plugin runner) lives next to this bundle;
// inserted on `debug(true)` or the first `register` only, with this script's nonce (a strict CSP
// allows it then). A chunk that failed to load is fetched again on the next need.
const self = document.currentScript;
const src = self instanceof HTMLScriptElement ? self.src : '';
let chunk: Promise<LazyChunk> | undefined;
const loadChunk = () =>
  (chunk ||= new Promise<LazyChunk>((loaded, failed) => {
    if (!src) return failed('no script URL to load it from');
    const s = document.createElement('script');
    // the bundle's file name replaced, its query kept (a version or a signature)
    s.src = src.replace(/[^/?#]*(?=[?#]|$)/, 'analytics.debug.min.js');
    s.nonce = (self as HTMLScriptElement).nonce;
    s.onload = () => (w.svcAnalyticsDebug && w.svcAnalyticsDebug.plugins ? loaded(w.svcAnalyticsDebug) : failed('not the library\'s chunk'));
    s.onerror = () => failed('the script failed to load');
    document.head.appendChild(s);
  }).catch((e) => {
    chunk = undefined;
    throw e;
  }));
// A second copy of the bundle on the page leaves the first one in charge.
if (!stub || !stub.VERSION) {
  try {
    takeOver();
  } catch (e) {
    console.error('[svc-analytics] could not start', e); // never thrown into the page
  }
}

function takeOver() {
  const { api, load, replay, helperDeps } = createAnalytics({
    debug: src ? () => loadChunk().then((c) => c.tools) : undefined,
    transforms: (settings, report) => createTransforms(settings, report, () => loadChunk().then((c) => c.plugins)),
  });
  addHelpers(api, helperDeps);
  const calls: BufferedCall[] = Array.isArray(stub) ? stub.splice(0) : [];
  w.analytics = api;
  // Pages that kept a reference to the stub array keep working: it gets the real methods too.
  if (stub) Object.assign(stub, api);
  // This page's recorded calls, and those of earlier pages whose bundle never came, kept in the stub's buffer: run by
  // `load`, before it starts automatic page views (or here, if the page has not called `load` yet).
  // As analytics.js: the page's handlers, source middleware and plugins are in place before any recorded call runs,
  // wherever the page made them (a middleware added after the snippet's page() still filters it).
  // Each recorded call of this page runs once: from memory while nothing may be stored (consent pending), and the
  // take-over of the stored buffer (other pages' calls too) once storing is allowed.
  const done = new Set<BufferedCall>();
  const once = (c: BufferedCall) => (done.has(c) ? undefined : (done.add(c), replay(c[0], c[1], c[2], c[3])));
  calls.filter((c) => EARLY.test(c[0])).forEach(once);
  const recorded = (storage: boolean) =>
    storage ? takeOverBuffer(calls, stub && stub.pid, once, loadCall && bindingOf(loadCall[1])) : calls.forEach((c) => c[0] != 'load' && once(c));
  const loadCall = calls.find((c) => c[0] == 'load');
  if (loadCall) load(...(loadCall[1] as [string, object?]), recorded);
  else recorded(true);
}
