// `svc-analytics/service-worker` (CONTRACT section 1): imported once in a site's own service worker, it answers the
// Background Sync its pages ask for when a send fails for lack of a network (src/offline/sync-request.ts): once the
// browser is online again, with no page of the site open, it delivers what the pages stored (src/offline/deliver.ts).
import { deliverStored, keepNote, type DeliveryRun } from '../offline/deliver';
import { NOTE_MESSAGE, SYNC_TAG } from '../offline/sync-request';

interface SyncEvent extends Event {
  tag: string;
  waitUntil(p: Promise<unknown>): void;
}
interface NoteEvent extends Event {
  data: unknown;
  waitUntil(p: Promise<unknown>): void;
}
interface WorkerScope {
  addEventListener(type: 'sync', listener: (e: SyncEvent) => void): void;
  addEventListener(type: 'message', listener: (e: NoteEvent) => void): void;
  clients: { matchAll(options: { type: string; includeUncontrolled: boolean }): Promise<readonly unknown[]> };
}

/**
 * A sync of ours: while a page of the site is open, that page sends (what it stored, and what closed pages left:
 * it adopts their records, and reads their exit notes first); otherwise the worker delivers, but for what the
 * pages' exit note names (they tell it to the worker as they write it: it cannot read their localStorage). Rejects when messages are left for lack of a network, so the browser tries again later.
 */
export async function onSync(scope: WorkerScope = self as unknown as WorkerScope): Promise<DeliveryRun | undefined> {
  const open = await scope.clients.matchAll({ type: 'window', includeUncontrolled: true }).catch(() => []);
  if (open.length) return;
  const run = await deliverStored();
  if (run.failed) throw new Error(`svc-analytics: ${run.delivered} message(s) delivered, the rest left for later`);
  return run;
}

// Listened to as the worker's script runs (a service worker adds its listeners then, or never gets the events).
if (typeof ServiceWorkerGlobalScope != 'undefined' && self instanceof ServiceWorkerGlobalScope) {
  const scope = self as unknown as WorkerScope;
  scope.addEventListener('sync', (e) => e.tag == SYNC_TAG && e.waitUntil(onSync()));
  // A page's exit note (src/offline/sync-request.ts `mirrored`): what it names is not sent again. Other messages are
  // the site's own.
  scope.addEventListener('message', (e) => {
    const data = e.data as Record<string, unknown> | null;
    if (data && typeof data == 'object' && Object.prototype.hasOwnProperty.call(data, NOTE_MESSAGE)) e.waitUntil(keepNote(data[NOTE_MESSAGE]));
  });
}

declare const ServiceWorkerGlobalScope: { new (): unknown; prototype: unknown } | undefined;

export { deliverStored, SYNC_TAG };
export type { DeliveryRun };
