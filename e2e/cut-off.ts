// Page functions (self-contained: they run in the page, sent as source text) for the test of a delete from
// IndexedDB that a page's unload cuts off: another tab of the site holds the library's store in a readwrite
// transaction, so the delete that follows a 2xx waits behind it and the page leaves before it commits.

/**
 * In the holding tab: once the record `id` is stored, holds the store (`svc-analytics`/`queue`) in a readwrite
 * transaction until `window.__release` is set, or 10 s at most. Resolves once it holds it.
 */
export const holdQueueStore = (id: string) =>
  new Promise<void>((held, failed) => {
    const request = indexedDB.open('svc-analytics');
    request.onerror = () => failed(request.error);
    request.onsuccess = () => {
      const db = request.result;
      const until = Date.now() + 10_000;
      const hold = () => {
        const store = db.transaction('queue', 'readwrite').objectStore('queue');
        const spin = () => {
          if (!(window as any).__release && Date.now() < until) store.get('-').onsuccess = spin;
        };
        store.getAllKeys().onsuccess = (e) => {
          if (!((e.target as IDBRequest).result as IDBValidKey[]).includes(id))
            return Date.now() < until ? void setTimeout(hold, 10) : failed(new Error(`${id} was never stored`));
          held();
          spin();
        };
      };
      hold();
    };
  });

/** In the tracking tab: records the keys the page asks IndexedDB to delete (`window.__deleting`). */
export const watchDeletes = () => {
  const del = IDBObjectStore.prototype.delete;
  (window as any).__deleting = [];
  IDBObjectStore.prototype.delete = function (this: IDBObjectStore, key: IDBValidKey | IDBKeyRange) {
    (window as any).__deleting.push(String(key));
    return del.call(this, key);
  };
};

/** Whether the library's queue store no longer holds `id` (opens the database: call it once the library has). */
export const notStored = (id: string) =>
  new Promise<boolean>((done, failed) => {
    const request = indexedDB.open('svc-analytics');
    request.onerror = () => failed(request.error);
    request.onsuccess = () => {
      const db = request.result;
      const keys = db.transaction('queue').objectStore('queue').getAllKeys();
      keys.onsuccess = () => (db.close(), done(!(keys.result as IDBValidKey[]).map(String).includes(id)));
    };
  });
