import { BUFFER_GRACE_MS, BUFFER_MAX_AGE_MS, DONE_KEPT_MS, mark, REPLAYED, same, type BufferedCall } from './buffer';

// The take-over of other pages' calls from the stub's buffer (src/stub/buffer.ts): only visits after a page of the
// site whose bundle never came (or is late) need it, so it lives in the lazy chunk (src/entry/debug-browser.ts), which
// the bundle loads before `load` runs when the buffer holds such calls (`othersWaiting`); elsewhere the bundle takes
// its own calls itself (`takeOwn`). What reads and writes the buffer comes from the bundle (`BufferIO`): the chunk
// does not carry it again.

/** The bundle's buffer access (src/stub/buffer.ts): `readBuffer`, `writeBuffer`, `bindingOf`, and `from` (see `planBuffer`). */
export interface BufferIO {
  read(): BufferedCall[];
  write(buffer: BufferedCall[]): void;
  binding(args: unknown[]): string;
  from(): [string, number];
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
export function planBuffer(io: Pick<BufferIO, 'binding'>, buffer: BufferedCall[], recorded: BufferedCall[], own: number | undefined, now: number, bound?: string, from?: [string, number]): BufferPlan {
  buffer = buffer.filter((c) => now - c[3] < BUFFER_MAX_AGE_MS);
  const news = new Map<number, number>();
  const bindings = new Map<number, string>();
  for (const c of buffer) {
    news.set(c[4], Math.max(news.get(c[4]) || 0, c[6] || c[3]));
    if (c[0] == 'load' && !bindings.has(c[4])) bindings.set(c[4], io.binding(c[1]));
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
export function takeOverBuffer(io: BufferIO, recorded: BufferedCall[], own: number | undefined, replay: (call: BufferedCall) => unknown, bound?: string): () => void {
  const read = io.read();
  const plan = planBuffer(io, read, recorded, own, Date.now(), bound, io.from());
  const taken = (c: BufferedCall) => plan.take.some((t) => same(t, c));
  if (plan.take.length || plan.buffer.length < read.length) io.write(plan.buffer);
  const queued = plan.take.map((c) => Promise.resolve(replay(c)).catch(() => {}));
  let finished = false;
  // Once the replayed calls' messages are stored; or at once as the page is hidden or left (the caller calls it
  // then), when their messages are in the queue and leave with the exit hand-off: a store that commits only later, or
  // never, must not leave them to the next page, which would send them again under new message ids.
  const finish = () => {
    if (finished || (finished = true, !plan.take.length && !plan.buffer.some((c) => c[4] === own))) return;
    const adoptedPages = new Set(plan.take.map((c) => c[4]));
    const buffer = io.read();
    // Pages with calls still to send (claimed by a page at work): their `load` stays, it binds them.
    const left = new Set(buffer.filter((c) => REPLAYED.test(c[0]) && !taken(c) && !c[7]).map((c) => c[4]));
    const replayed = (c: BufferedCall) => REPLAYED.test(c[0]) || (c[0] == 'load' && left.has(c[4]));
    io.write(
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
  if (plan.next) setTimeout(() => takeOverBuffer(io, [], own, replay, bound), plan.next - Date.now());
  return finish;
}
