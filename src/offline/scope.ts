// Where the library runs (CONTRACT section 1, "workers and extensions"): a page, a worker (dedicated, shared or
// service worker, an extension's), or a server.

declare const WorkerGlobalScope: unknown;
// `__PAGE_ONLY__`: true in the CDN bundle (rollup.config.mjs), which runs in pages only: what follows folds away there.
declare const __PAGE_ONLY__: boolean;
const pageOnly = typeof __PAGE_ONLY__ != 'undefined' && __PAGE_ONLY__;

/** True where there is a document (a page): a worker has no DOM, no page facts, no screen, no page lifecycle. */
export const hasDocument = () => pageOnly || typeof document != 'undefined';

/** True on a server (SSR, Node): no window, and no worker's global scope. */
export const noBrowser = () => typeof window == 'undefined' && (pageOnly || typeof WorkerGlobalScope == 'undefined');
