import { createStore, clear, type UseStore } from 'idb-keyval';
import type { QueueRecord } from './records';
import type { Platform } from './platform';

// The queue's IndexedDB store (queue.ts keeps the records): opening it, writing through to it, emptying it.

// Our own database, never idb-keyval's default, so a host page using idb-keyval is unaffected.
export const DB = 'svc-analytics';

/**
 * Our store, each of its transactions committed as soon as its requests are placed (`IDBTransaction.commit()`,
 * https://w3c.github.io/IndexedDB/#dom-idbtransaction-commit). Left to commit by itself, a transaction waits until
 * this page has handled its requests' results: a page frozen first (into the back/forward cache just after a call,
 * a delivery or its own exit) keeps it open, the next page's first conflicting transaction waits on it, and Chromium
 * evicts the cached page ("IgnoreEventAndEvict", e2e/bfcache.spec.ts). The idb-keyval functions used here place all
 * their requests at once (getAll, never a cursor, wherever commit exists); where commit is missing, as before.
 */
const committingStore = (): Store => {
  const store = createStore(DB, 'queue');
  return ((mode: IDBTransactionMode, fn: (s: IDBObjectStore) => unknown, ownCommit?: boolean) =>
    store(mode, (s) => {
      // (`fn` placed its requests in this same task: the transaction is still active, and commit cannot throw)
      const result = fn(s);
      ownCommit || s.transaction.commit?.();
      return result;
    })) as Store;
};

/** The store: idb-keyval's, and `ownCommit` for a transaction that places requests later and commits itself. */
type Store = UseStore & ((mode: IDBTransactionMode, fn: (s: IDBObjectStore) => unknown, ownCommit: true) => Promise<unknown>);

/**
 * Reads every record, then writes those `decide` returns, in one readwrite transaction, which it commits once they
 * are placed; resolves to them once committed. IndexedDB runs the readwrite transactions of a store one at a time
 * (https://w3c.github.io/IndexedDB/#transaction-scheduling), so no other tab writes between the read and the writes:
 * what two tabs without Web Locks claim at once (`queue._adopt`, `_reconcile`) is claimed by one only (sim seed
 * 13471: two tabs read an orphan before either claimed it, and both handed it to the browser as they went away). The
 * transaction waits for this page to handle its read (unlike `committingStore`'s): a page frozen just then holds it
 * until it runs again; adoption and reconciling are no page-exit work, so that is rare.
 */
export const readWrite = (s: Store, decide: (all: QueueRecord[]) => QueueRecord[]) =>
  s(
    'readwrite',
    (os) =>
      new Promise<QueueRecord[]>((ok, fail) => {
        const t = os.transaction;
        let list: QueueRecord[] = [];
        let error: unknown;
        const read = os.getAll();
        read.onsuccess = () => {
          try {
            list = decide(read.result);
            for (const r of list) os.put(r, r.id);
            t.commit?.();
          } catch (e) {
            // (a put refused at once: a full disk, QuotaExceededError)
            error = e;
            t.abort();
          }
        };
        t.oncomplete = () => ok(list);
        t.onabort = () => fail(error || t.error);
      }),
    true,
  ) as Promise<QueueRecord[]>;

/**
 * Empties the store of a queue this page never opened (consent denied, opt-out), without creating it where it does
 * not exist: `indexedDB.databases()` says whether it does (https://developer.mozilla.org/docs/Web/API/IDBFactory/databases);
 * where that is missing nothing is opened (opening would create it). Resolves to whether the store is empty now (it is
 * not known where `databases` is missing); never rejects.
 */
export function clearStored(): Promise<boolean | void> {
  return Promise.resolve()
    .then(() => indexedDB.databases())
    .then((list) => !list.some((d) => d.name == DB) || clear(committingStore()).then(() => true))
    .catch(() => {});
}

// The queue's IndexedDB store while it works: `persist` runs an operation on it and never rejects (a failed one
// resolves to undefined), and tells `fallback` of every failure. A store that never answered (a synchronous throw
// from `indexedDB.open`, an open that fails or never settles) leaves the queue in memory from then on. Once it has
// answered, one failure is that operation's only (a full disk refuses writes, and deletes still go through): the
// store is kept, or this page would never delete what it delivers, and the next page would send it again.
export function openStore(fallback: (error: unknown) => void, p: Platform) {
  let store: Store | undefined;
  try {
    store = typeof indexedDB != 'undefined' ? committingStore() : undefined;
  } catch {
    // indexedDB present but throws on access (a sandboxed frame without allow-same-origin in Chromium:
    // e2e/conditions.spec.ts, "a sandboxed frame ..."). A failing `open` (Firefox's private windows before 115,
    // https://bugzilla.mozilla.org/show_bug.cgi?id=781982) is caught by `persist`.
  }
  if (!store) fallback(new Error('no IndexedDB'));
  // Until the store first answers, an operation that gets no answer within OPEN_TIMEOUT_MS counts as a failure: an
  // `open` that never settles (a stalled profile, Safari 14's bug) would otherwise leave every call's promise, `ready`
  // and `flush` pending for the page's life.
  let answered = false;
  const first = <T>(q: Promise<T>) =>
    answered
      ? q
      : new Promise<T>((resolve, reject) => {
          const timer = p._setTimeout(() => reject(new Error(`no answer within ${OPEN_TIMEOUT_MS} ms`)), OPEN_TIMEOUT_MS);
          q.then((v) => ((answered = true), resolve(v)), reject).finally(() => p._clearTimeout(timer));
        });
  const persist = <T>(op: (s: Store) => Promise<T>): Promise<T | void> =>
    Promise.resolve()
      .then(() => store && first(op(store)))
      .catch((error) => {
        if (store) fallback(error);
        if (!answered) store = undefined;
      });
  // (`_open`: whether the store is still in use, so that other tabs can read what this page writes)
  return Object.assign(persist, { _open: () => !!store });
}

/** How long the queue's store may take to answer its first operation (see `openStore`). */
export const OPEN_TIMEOUT_MS = 3000;

// Writes records through in bursts: those added while a write is pending go together in the next transaction.
export function writeBehind(save: (list: QueueRecord[]) => Promise<void>) {
  let pending: QueueRecord[] = [];
  let writing: Promise<void> = Promise.resolve();
  return {
    _write(record: QueueRecord): Promise<void> {
      pending.push(record);
      if (pending.length == 1)
        writing = writing.then(() => {
          const batch = pending;
          pending = [];
          return save(batch);
        });
      return writing;
    },
    _flushed: () => writing,
  };
}

