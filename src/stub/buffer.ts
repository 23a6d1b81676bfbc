import type { RecordedPage } from '../api/types';
import { stringify } from '../message/validate';
import { batchUrl } from '../api/config';
import { ownOptions } from '../message/boundary';
import type { LoadOptions } from '../types';
import { readPage } from '../api/page-context';

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
export const REPLAYED = /^(identify|track|page|pageview|screen|group|alias|reset|setAnonymousId|ecommerce\.\w+|semantic\.\w+)$/;
// Taken when the bundle runs (a page may replace JSON later).
const parse = JSON.parse;

const isCall = (c: unknown): c is BufferedCall =>
  Array.isArray(c) && typeof c[0] == 'string' && Array.isArray(c[1]) && Array.isArray(c[2]) && typeof c[3] == 'number' && c[4] != null;
export const same = (a: BufferedCall, b: BufferedCall) => a[4] === b[4] && a[5] === b[5];
/** The call claimed at `claimedAt`, and done if `done`. */
export const mark = (c: BufferedCall, claimedAt: number, done?: 1): BufferedCall =>
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

export function writeBuffer(b: BufferedCall[]) {
  try {
    if (b.length) localStorage.setItem(__BUFFER_KEY__, stringify(b as any));
    else localStorage.removeItem(__BUFFER_KEY__);
  } catch {
    // storage blocked or full: the buffer stays as it was
  }
}

/**
 * Whether the buffer may hold calls of another page that this page (binding `bound`: `bindingOf` its recorded `load`)
 * takes over: replayable, not done, not expired, of a page whose recorded `load` has this binding; or calls of this
 * page that another page claimed and has not finished with (taken back once it is late). Only then is the
 * whole take-over (`takeOverBuffer`, in the lazy chunk) needed; it decides (a page still alive keeps its calls for a while).
 */
export const othersWaiting = (buffer: BufferedCall[], own: number | undefined, bound: string | undefined, now: number) =>
  !!bound &&
  buffer.some(
    (c) =>
      !c[7] &&
      now - c[3] < BUFFER_MAX_AGE_MS &&
      REPLAYED.test(c[0]) &&
      (c[4] === own ? !!c[6] : buffer.some((l) => l[4] === c[4] && l[0] == 'load' && bindingOf(l[1]) === bound)),
  );

/** What the lazy chunk's take-over (src/stub/adopt.ts) uses of the buffer: `from` is the page that led here and when this one started. */
export const bufferIO = { read: readBuffer, write: writeBuffer, binding: bindingOf, from: (): [string, number] => [readPage()[2], performance?.timeOrigin] };

/**
 * Takes this page's own calls from the buffer, as `takeOverBuffer` (src/stub/adopt.ts, in the lazy chunk) does where
 * no other page's calls wait (`othersWaiting`), or where that chunk could not load: claims the calls its stub
 * recorded, except those the buffer shows another page's bundle claimed, runs each through `replay` (which returns
 * the call's promise, if any), and once their messages are queued (or at once as the page is hidden or left: the
 * caller calls the returned function then, see `takeOverBuffer`) removes this page's calls from the buffer, but for
 * those another page claimed and did not finish with, and the page's `load`, which binds them; done marks and calls
 * past their age are dropped then too.
 */
export function takeOwn(recorded: BufferedCall[], own: number | undefined, replay: (call: BufferedCall) => unknown): () => void {
  const read = readBuffer();
  const take = recorded.filter((c) => c[0] != 'load' && !read.some((b) => same(b, c) && (b[6] || b[7])));
  const taken = (c: BufferedCall) => take.some((t) => same(t, c));
  const now = Date.now();
  if (take.length) writeBuffer(read.map((c) => (taken(c) ? mark(c, now) : c)));
  let finished = false;
  const finish = () => {
    if (finished || ((finished = true), !take.length && !read.some((c) => c[4] === own))) return;
    const buffer = readBuffer();
    const left = buffer.some((c) => c[4] === own && REPLAYED.test(c[0]) && !taken(c) && !c[7]);
    const now = Date.now();
    writeBuffer(
      buffer.filter(
        (c) =>
          (c[4] !== own || (!taken(c) && !c[7] && (REPLAYED.test(c[0]) || (c[0] == 'load' && left)))) &&
          (!c[7] || now - c[6]! < DONE_KEPT_MS) &&
          now - c[3] < BUFFER_MAX_AGE_MS,
      ),
    );
  };
  Promise.all(take.map((c) => Promise.resolve(replay(c)).catch(() => {}))).then(finish);
  return finish;
}
