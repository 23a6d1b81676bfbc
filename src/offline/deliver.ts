import { createStore, values, setMany, delMany, get, set, type UseStore } from 'idb-keyval';
import { DB, OPEN_TIMEOUT_MS } from '../delivery/store';
import { DEFAULT_BOUNDS, type QueueRecord } from '../delivery/records';
import { planBatches, body } from '../delivery/batch';
import { classify } from '../delivery/retry';
import { LEASE_MS } from '../delivery/tabs';

// A service worker's delivery of what the site's pages stored and could not send (`svc-analytics/service-worker`,
// CONTRACT section 1): the same IndexedDB queue as the pages (delivery/store.ts, records.ts) and the same ownership
// as the tabs (delivery/tabs.ts): the worker is one more participant, with a life lock of its own while it works,
// that adopts under the tabs' adoption lock only what no live page owns, so a page and the worker never send the
// same record. What it could not send is left, with its owner gone, to the next page or the next sync.

// The lock names of delivery/tabs.ts (`PREFIX + 'tab:' + id`, `PREFIX + 'adopt'`) and its BroadcastChannel.
const PREFIX = 'svc-analytics:';
const tabLock = (id: string) => PREFIX + 'tab:' + id;

/** How a run went: messages delivered, and whether some are left for lack of a network or an answer (retry later). */
export interface DeliveryRun {
  delivered: number;
  failed: boolean;
}

type Locks = LockManager | undefined;

// The pages' exit note as they last told it (src/offline/sync-request.ts `mirrored`): the ids they handed to the
// browser as they went away, whose records the next page deletes rather than sends. Kept in a database of the
// worker's own, since the browser may stop the worker between the message and the sync.
const noteStore = () => createStore('svc-analytics-sw', 'note');

/** Keeps what the pages' exit note says now (its JSON text, or null once it is empty). Never rejects. */
export function keepNote(note: unknown): Promise<void> {
  let ids: unknown = [];
  try {
    ids = typeof note == 'string' ? JSON.parse(note) : [];
  } catch {
    // not a note of ours
  }
  return set('note', Array.isArray(ids) ? ids.filter((id) => typeof id == 'string') : [], noteStore()).catch(() => {});
}

// The records no live participant owns, adopted (owner: `id`) and written back, under the adoption lock.
async function adopt(store: UseStore, locks: Locks, id: string): Promise<QueueRecord[]> {
  const now = Date.now();
  // What the note names was handed to the browser: deleted, as the next page would (delivery/exit-note.ts).
  const noted = new Set(((await get<string[]>('note', noteStore()).catch(() => [])) || []) as string[]);
  const stored = ((await values<QueueRecord>(store)) || []).filter((r) => r && r.id && r.message && r.source);
  const handed = stored.filter((r) => noted.has(r.id)).map((r) => r.id);
  if (handed.length) await delMany(handed, store);
  const all = stored.filter((r) => !noted.has(r.id) && now - r.queuedAt <= DEFAULT_BOUNDS.maxAgeMs);
  const held = locks && new Set(((await locks.query()).held || []).map((l) => l.name));
  // (without Web Locks, as the tabs do: a record older than the lease is nobody's)
  const orphans = all.filter((r) => r.owner != id && (held ? !held.has(tabLock(r.owner)) : now - r.queuedAt > LEASE_MS));
  // (`claimedAt`: a lease of its own, as a tab's claim: without Web Locks a page that opens meanwhile tells by it that
  // the record is the worker's while it sends it; by its old `queuedAt` it was an orphan, and sent twice: the
  // simulator found it, seed 103 with h47's first start-up order, test/offline/deliver-claim.test.ts)
  for (const r of orphans) (r.owner = id), (r.claimedAt = now);
  if (orphans.length) await setMany(orphans.map((r) => [r.id, r]), store);
  return orphans.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

// Sends one source's records (`source`: "writeKey batchURL", as the page queued them), batch by batch; stops at the
// first failure. Delivered ones leave the store.
async function send(store: UseStore, source: string, list: QueueRecord[], run: DeliveryRun, post: typeof fetch) {
  const space = source.indexOf(' ');
  const writeKey = source.slice(0, space);
  const url = source.slice(space + 1);
  for (const batch of planBatches(list)) {
    let status = 0;
    try {
      const response = await post(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: 'Basic ' + btoa(writeKey + ':') },
        body: body(batch.map((r) => r.message), new Date()),
        credentials: 'omit',
        redirect: 'manual',
      });
      status = response.status;
      await response.arrayBuffer().catch(() => {});
    } catch {
      // no network: status 0
    }
    const ids = batch.map((r) => r.id);
    if (classify(status) == 'ok') {
      await delMany(ids, store);
      run.delivered += ids.length;
      continue;
    }
    // Not sent: counted as a failed attempt, so the page that adopts them next backs off from there. A refused
    // message (400, 413, 422) is the pages' to isolate (delivery/answer.ts); a network error is the browser's to
    // retry (the sync event fails).
    for (const r of batch) r.attempts++;
    await setMany(batch.map((r) => [r.id, r]), store);
    if (!status || classify(status) == 'retry') run.failed = true;
    return;
  }
}

/**
 * Delivers what the site's pages left in the queue and no live page owns, with the messages' original timestamps.
 * Resolves with how it went; never rejects (an unusable store or lock manager delivers nothing).
 */
export async function deliverStored(post: typeof fetch = fetch): Promise<DeliveryRun> {
  const run: DeliveryRun = { delivered: 0, failed: false };
  try {
    const store = createStore(DB, 'queue');
    const id = "worker-" + crypto.randomUUID();
    let locks: Locks;
    try {
      locks = navigator.locks;
    } catch {
      // as if missing
    }
    const work = async () => {
      // The pages watch our life lock as they watch each tab's, and adopt what we leave once we let go of it.
      try {
        const channel = new BroadcastChannel(PREFIX + 'tabs');
        channel.postMessage({ hello: id });
        channel.close();
      } catch {
        // no BroadcastChannel: pages find what we leave when they next look
      }
      // (bounded: a store that never answers, an open blocked by another connection, must not keep the adoption lock
      // from the pages for good; the sync fails and the browser tries again later)
      const bounded = () =>
        Promise.race([adopt(store, locks, id), new Promise<never>((_, fail) => setTimeout(() => fail(new Error('no answer from IndexedDB')), OPEN_TIMEOUT_MS))]);
      const mine = locks ? await locks.request(PREFIX + 'adopt', bounded) : await bounded();
      const bySource = new Map<string, QueueRecord[]>();
      for (const r of mine) (bySource.get(r.source!) || bySource.set(r.source!, []).get(r.source!)!).push(r);
      for (const [source, list] of bySource) await send(store, source, list, run, post);
    };
    await (locks ? locks.request(tabLock(id), work) : work());
  } catch {
    run.failed = true;
  }
  return run;
}
