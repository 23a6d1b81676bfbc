import type { RecordedPage } from '../api/types';
import { stringify } from '../message/validate';
import { batchUrl, ownOptions } from '../api/config';
import { readPage } from '../api/page-context';
import type { LoadOptions } from '../types';

declare const __BUFFER_KEY__: string;

/**
 * A call the stub recorded: `[method, args, page, time, page id, seq, claimedAt?, done?]`. The stub also writes the
 * calls of each task to the buffer (localStorage, the last 100 calls of all pages) when the task ends, so a bundle
 * that runs in the task of the calls finds them in memory only. Another page's bundle that takes a call claims it
 * (`claimedAt`), then marks it `done` once it is queued.
 */
export type BufferedCall = [string, unknown[], RecordedPage, number, number, number, number?, 1?];

/** A page's buffered calls are taken over by another page only after this long without news of it. */
export const BUFFER_GRACE_MS = 5000;

/** How long calls taken from another page stay marked done in the buffer (a late bundle of that page skips them). */
export const DONE_KEPT_MS = 600000;

/**
 * A buffered call older than this is dropped by the first bundle that reads the buffer (the queue's default
 * `maxAgeMs`): a page whose bundle never comes, and no page of the calls' write key and host, leaves nothing for good.
 */
export const BUFFER_MAX_AGE_MS = 6048e5;

/**
 * The binding of a page's calls (CONTRACT section 6): the write key and batch URL its recorded `load(writeKey,
 * options)` names (the first one: the one its bundle runs). Another page replays them only under the same ones.
 */
export function bindingOf(args: unknown[]): string {
  const o = ownOptions(args[1] as LoadOptions);
  const url = batchUrl(o.apiHost, o.region);
  return args[0] + ' ' + (url[0] == '/' ? location.origin : '') + url;
}

// The calls of another page worth replaying: those that make a message or change the identity.
const REPLAYED = /^(identify|track|page|pageview|screen|group|alias|reset|setAnonymousId|ecommerce\.\w+|semantic\.\w+)$/;
// Taken when the bundle runs (a page may replace JSON later).
const parse = JSON.parse;

const isCall = (c: unknown): c is BufferedCall =>
  Array.isArray(c) && typeof c[0] == 'string' && Array.isArray(c[1]) && Array.isArray(c[2]) && typeof c[3] == 'number' && c[4] != null;
const same = (a: BufferedCall, b: BufferedCall) => a[4] === b[4] && a[5] === b[5];
/** The call claimed at `claimedAt`, and done if `done`. */
const mark = (c: BufferedCall, claimedAt: number, done?: 1): BufferedCall =>
  [c[0], c[1], c[2], c[3], c[4], c[5], claimedAt, ...(done ? ([done] as const) : ([] as const))];

/** The buffer as stored (what is not a recorded call is ignored); empty when storage is unusable. */
export function readBuffer(): BufferedCall[] {
  try {
    const b = parse(localStorage.getItem(__BUFFER_KEY__) || '[]');
    return Array.isArray(b) ? b.filter(isCall) : [];
  } catch {
    return [];
  }
}

/** Removes the stub's buffer (an opt-out, a denial of consent: nothing of the visitor's is kept). */
export const clearBuffer = () => writeBuffer([]);

function writeBuffer(b: BufferedCall[]) {
  try {
    if (b.length) localStorage.setItem(__BUFFER_KEY__, stringify(b as any));
    else localStorage.removeItem(__BUFFER_KEY__);
  } catch {
    // storage blocked or full: the buffer stays as it was
  }
}

/** What this page takes from the buffer: calls to replay in order, the buffer with them claimed, and when to look again. */
export interface BufferPlan {
  take: BufferedCall[];
  buffer: BufferedCall[];
  /** When calls of another page that may still be alive become ours to take (none: undefined). */
  next?: number;
}

/**
 * Plans the take-over of the buffer at `now`; pure. This page (`own`, with the calls its stub recorded in memory)
 * takes its own calls, except those the buffer shows another page's bundle claimed. It takes another page's calls
 * once that page gave no news for `BUFFER_GRACE_MS` (its bundle never came: the page is gone, or it will find them
 * claimed), and calls claimed by a page that did not finish with them within that time; of another page, only
 * calls whose page's recorded `load` has this page's binding `bound` (`bindingOf`): none when this page has no
 * binding, nor of a page with no `load` in the buffer (consent-pending, or pushed out by 100 later calls), which
 * wait for their own bundle, or expire. `from`: the page this one was opened from (its referrer) and when this one
 * started: a page of that URL whose calls all came before is the one that led here (it is gone, or its late bundle
 * finds them claimed), and its calls are taken at once, before this page's own (a `reset()` made before a logout link
 * was followed applies to this page's first message). Taken calls are claimed in the returned buffer, and calls older
 * than `BUFFER_MAX_AGE_MS` are left out of it.
 */
export function planBuffer(buffer: BufferedCall[], recorded: BufferedCall[], own: number | undefined, now: number, bound?: string, from?: [string, number]): BufferPlan {
  buffer = buffer.filter((c) => now - c[3] < BUFFER_MAX_AGE_MS);
  const news = new Map<number, number>();
  const bindings = new Map<number, string>();
  for (const c of buffer) {
    news.set(c[4], Math.max(news.get(c[4]) || 0, c[6] || c[3]));
    if (c[0] == 'load' && !bindings.has(c[4])) bindings.set(c[4], bindingOf(c[1]));
  }
  let next: number | undefined;
  // Another page's calls, and this page's calls that another page claimed and did not finish with in time.
  const others = buffer.filter((c) => {
    if (c[7] || !REPLAYED.test(c[0]) || (c[4] === own ? !c[6] : !bound || bindings.get(c[4]) !== bound)) return false;
    const free = !c[6] && from && c[2][0].split('#')[0] == from[0] && news.get(c[4])! < from[1] ? 0 : (c[6] || news.get(c[4])!) + BUFFER_GRACE_MS;
    if (free <= now) return true;
    next = Math.min(next ?? free, free);
    return false;
  });
  const mine = recorded.filter((c) => c[0] != 'load' && !buffer.some((b) => same(b, c) && (b[6] || b[7])));
  const take = [...others.sort((a, b) => a[3] - b[3]), ...mine];
  return {
    take,
    buffer: buffer.map((c) => (take.some((t) => same(t, c)) ? mark(c, now) : c)),
    next,
  };
}

/**
 * Takes over the buffer: claims what `planBuffer` gives this page, runs each call through `replay` (which returns
 * the call's promise, if any), and once their messages are queued removes this page's calls from the buffer and
 * marks the other pages' calls done (a page whose bundle comes late then knows they were sent). Looks again when
 * another page's calls come due. `bound`: this page's binding (`bindingOf` its recorded `load`), if it has one.
 */
export function takeOverBuffer(recorded: BufferedCall[], own: number | undefined, replay: (call: BufferedCall) => unknown, bound?: string): () => void {
  const read = readBuffer();
  const plan = planBuffer(read, recorded, own, Date.now(), bound, [readPage()[2], performance?.timeOrigin]);
  const taken = (c: BufferedCall) => plan.take.some((t) => same(t, c));
  if (plan.take.length || plan.buffer.length < read.length) writeBuffer(plan.buffer);
  const queued = plan.take.map((c) => Promise.resolve(replay(c)).catch(() => {}));
  let finished = false;
  // Once the replayed calls' messages are stored; or at once as the page is hidden or left (the caller calls it
  // then), when their messages are in the queue and leave with the exit hand-off: a store that commits only later, or
  // never, must not leave them to the next page, which would send them again under new message ids.
  const finish = () => {
    if (finished || (finished = true, !plan.take.length && !plan.buffer.some((c) => c[4] === own))) return;
    const adoptedPages = new Set(plan.take.map((c) => c[4]));
    const buffer = readBuffer();
    // Pages with calls still to send (claimed by a page at work): their `load` stays, it binds them.
    const left = new Set(buffer.filter((c) => REPLAYED.test(c[0]) && !taken(c) && !c[7]).map((c) => c[4]));
    const replayed = (c: BufferedCall) => REPLAYED.test(c[0]) || (c[0] == 'load' && left.has(c[4]));
    writeBuffer(
      buffer
        // This page's calls it took, or that another page sent, are done with, and so are those no page replays (its
        // `load`, unless calls it binds are left); so are another page's calls that are not replayed, once that page
        // is adopted, but for its `load`: that page may still be open, and its `load` binds the calls it makes later
        // (until the age limit).
        .filter((c) => !(c[4] === own && (taken(c) || c[7] || !replayed(c))) && (taken(c) || c[0] == 'load' || !adoptedPages.has(c[4]) || replayed(c)))
        .map((c) => (taken(c) ? mark(c, c[6] || Date.now(), 1) : c))
        // A done mark matters only while the page it came from might still be loading its bundle.
        .filter((c) => (!c[7] || Date.now() - c[6]! < DONE_KEPT_MS) && Date.now() - c[3] < BUFFER_MAX_AGE_MS),
    );
  };
  Promise.all(queued).then(finish);
  if (plan.next) setTimeout(() => takeOverBuffer([], own, replay, bound), plan.next - Date.now());
  return finish;
}
