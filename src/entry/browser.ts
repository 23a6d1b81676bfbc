// The IIFE bundle (dist/analytics.min.js): takes over the snippet's stub, or stands alone.
import { createAnalytics } from '../api/analytics';
import { addHelpers } from '../helpers/add-helpers';
import { takeOverBuffer, type BufferedCall } from '../api/buffer';
import type { DebugTools } from '../debug/debug';

const w = window as any;
const EARLY = /^(on|once|off|register|add(Source|Destination|Integration)Middleware)$/;
const stub = w.analytics;
// The debug tools (dist/analytics.debug.min.js) live next to this bundle; inserted on `debug(true)` only, with this
// script's nonce (a strict CSP allows them then).
const self = document.currentScript as HTMLScriptElement | null;
const loadDebug = () =>
  new Promise<DebugTools>((loaded, failed) => {
    const s = document.createElement('script');
    // the bundle's file name replaced, its query kept (a version or a signature)
    s.src = self!.src.replace(/[^/?#]*(?=[?#]|$)/, 'analytics.debug.min.js');
    s.nonce = self!.nonce;
    s.onload = () => loaded(w.svcAnalyticsDebug);
    s.onerror = failed;
    document.head.appendChild(s);
  });
// A second copy of the bundle on the page leaves the first one in charge.
if (!stub || !stub.VERSION) {
  try {
    takeOver();
  } catch (e) {
    console.error('[svc-analytics] could not start', e); // never thrown into the page
  }
}

function takeOver() {
  const { api, load, replay, helperDeps } = createAnalytics(self && self.src ? loadDebug : undefined);
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
    storage ? takeOverBuffer(calls, stub && stub.pid, once) : calls.forEach((c) => c[0] != 'load' && once(c));
  const loadCall = calls.find((c) => c[0] == 'load');
  if (loadCall) load(...(loadCall[1] as [string, object?]), recorded);
  else recorded(true);
}
