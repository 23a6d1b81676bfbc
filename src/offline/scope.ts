// Where the library runs (CONTRACT section 1, "workers and extensions"): a page, a worker (dedicated, shared or
// service worker, an extension's), or a server.

declare const WorkerGlobalScope: unknown;
// `__PAGE_ONLY__`: true in the CDN bundle (rollup.config.mjs), which runs in pages only: what follows folds away there.
declare const __PAGE_ONLY__: boolean;
const pageOnly = typeof __PAGE_ONLY__ != 'undefined' && __PAGE_ONLY__;

/** True where there is a document (a page): a worker has no DOM, no page facts, no screen, no page lifecycle. */
export const hasDocument = () => pageOnly || typeof document != 'undefined';

/** True on a server (SSR, Node): no window, and no worker's global scope. */
// (false in the CDN bundle, which runs in pages: its server-only branches fold away)
export const noBrowser = () => !pageOnly && typeof window == 'undefined' && typeof WorkerGlobalScope == 'undefined';

/** What the identity keeps its values in where there is no localStorage (a worker): see worker-storage.ts. */
export interface KeyValues {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}
// Set by the npm entry (entry/npm.ts), so that the CDN bundle, for pages only, never carries it.
let workerValues: KeyValues | undefined;
/** The worker's storage (set by the npm entry); the identity reads it in place of localStorage. */
export const workerStorage = (): KeyValues => workerValues!;
export const useWorkerStorage = (values: KeyValues) => void (workerValues = values);
