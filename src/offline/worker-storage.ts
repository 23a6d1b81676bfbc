import { createStore, entries, set, del } from 'idb-keyval';

// The identity's storage in a worker (CONTRACT section 1, "workers and extensions": the anonymous id in IndexedDB
// where there is no localStorage or cookie): a Storage-like map, read from IndexedDB once before the library loads
// (npm.ts) and written through to it. A database of its own (the queue's has its own schema: delivery/store.ts).

const values = new Map<string, string>();
let store: ReturnType<typeof createStore> | undefined;
const idb = () => (store ||= createStore('svc-analytics-identity', 'identity'));
// (never rejects: a worker without IndexedDB keeps its identity in memory)
const quietly = (fn: () => Promise<unknown>) => {
  try {
    fn().catch(() => {});
  } catch {
    // no IndexedDB
  }
};

/** What the identity (identity.ts) reads and writes where there is no localStorage. */
export const workerStorage = {
  getItem: (key: string): string | null => values.get(key) ?? null,
  setItem(key: string, value: string) {
    values.set(key, value);
    quietly(() => set(key, value, idb()));
  },
  removeItem(key: string) {
    values.delete(key);
    quietly(() => del(key, idb()));
  },
};

/** Reads what earlier runs of this origin's workers stored; resolves within `ms` whatever happens. */
export function loadWorkerStorage(ms = 3000): Promise<void> {
  return new Promise<void>((done) => {
    const timer = setTimeout(done, ms);
    const finish = () => (clearTimeout(timer), done());
    try {
      entries<string, string>(idb()).then((list) => {
        for (const [k, v] of list) if (typeof k == 'string' && typeof v == 'string' && !values.has(k)) values.set(k, v);
      }).then(finish, finish);
    } catch {
      finish();
    }
  });
}
