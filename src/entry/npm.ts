import { sources } from '../sources';
import type { BrowserSettings, LoadOptions } from '../types';
import type { CoreAnalytics, HelperDeps } from '../api/types';
import { createAnalytics } from '../api/analytics';
import { createTransforms } from '../extend/transforms';
import type { Plugin } from '../extend/types';
import { hasDocument, noBrowser, useWorkerStorage } from '../offline/scope';
import { loadWorkerStorage, workerStorage } from '../offline/worker-storage';
import { useAdoption } from '../identity/link';
import { adoptFrom } from '../identity/adopt-link';

// One instance per write key in a page, whatever loads it again: React's StrictMode runs effects twice, and hot
// module reload evaluates this module again (so the registry lives on the global object, not in this module). Both
// npm entries (`svc-analytics` and `svc-analytics/core`) share it.
// The key names the shape of its entries (`Instance`): two builds of the package on one page share it only if they
// agree on it.
const INSTANCES = Symbol.for('svc-analytics.instances.2');

interface Instance {
  api: CoreAnalytics;
  helperDeps: HelperDeps;
}

/**
 * `AnalyticsBrowser.load({ writeKey }, options)` of the npm entries: the API, usable before it is ready. In a browser
 * a second `load` with the same write key returns the first instance (its options stay those of the first). `extend`
 * adds to an instance, new or found (the helper namespaces of the `svc-analytics` entry).
 */
export function loadBrowser(settings: BrowserSettings, options?: LoadOptions): CoreAnalytics;
export function loadBrowser<A extends CoreAnalytics>(settings: BrowserSettings, options: LoadOptions | undefined, extend: (api: CoreAnalytics, deps: HelperDeps) => A): A;
export function loadBrowser(settings: BrowserSettings, options?: LoadOptions, extend?: (api: CoreAnalytics, deps: HelperDeps) => CoreAnalytics): CoreAnalytics {
  const writeKey = settings && settings.writeKey;
  const registry: Map<string, Instance> | undefined =
    noBrowser() ? undefined : ((globalThis as typeof globalThis & { [INSTANCES]?: Map<string, Instance> })[INSTANCES] ||= new Map());
  let instance = registry && typeof writeKey == 'string' ? registry.get(writeKey) : undefined;
  if (!instance) {
    // The adoption of a `linkDomains` link's id, at once (the CDN bundle has it in its lazy chunk).
    useAdoption(adoptFrom);
    // The debug tools and the plugin runner are chunks of their own, imported on `debug(true)` and `register` only.
    const { api, load, unloadable, helperDeps } = createAnalytics({
      debug: () => import('../debug/debug').then((m) => m.createDebugTools()),
      transforms: (settings, report) => createTransforms(settings, report, () => import('../extend/plugins').then((m) => m.pluginRunner)),
      tools: () => import('../identity/tools').then((m) => m.linkTools),
      plan: (plan, report) => import('../plan/browser-check').then((m) => m.createPlanCheck(plan, report)),
      sources: () => sources,
    });
    instance = { api, helperDeps };
    if (extend) extend(api, helperDeps);
    // On a server (SSR) `load` does nothing and touches no browser global; calls are refused with `not_loaded`.
    // Plugins first, as analytics.js: every message, the first page view included, goes through them.
    if (settings && Array.isArray(settings.plugins)) api.register(...(settings.plugins as Plugin[]));
    const start = (found: Instance) => {
      // The rest of start-up once the app's current script is done (a microtask): the middleware and plugins it adds
      // right after `load` see what other pages of the site left waiting for theirs (CONTRACT section 1), as the
      // CDN bundle's do (its stub recorded them, or its start-up runs in tasks of its own).
      const failed = load(writeKey, options, undefined, (step) => void Promise.resolve().then(step));
      // (no other load comes for this instance: its calls are refused with why, rather than wait for ever)
      if (failed) unloadable(failed);
      if (registry && api.initialized) registry.set(writeKey, found);
    };
    // In a worker the identity is read from IndexedDB first (offline/worker-storage.ts); calls made meanwhile wait.
    if (hasDocument() || noBrowser()) start(instance);
    else {
      useWorkerStorage(workerStorage);
      loadWorkerStorage().then(() => start(instance!));
    }
  }
  return extend ? extend(instance.api, instance.helperDeps) : instance.api;
}
