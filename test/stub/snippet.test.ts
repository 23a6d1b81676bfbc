import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { bufferIO, takeOwn, type BufferedCall } from '../../src/stub/buffer';
import { takeOverBuffer } from '../../src/stub/adopt';

// vitest.config.mjs defines __BUFFER_KEY__ for src/ as this.
const KEY = 'svc_buffer';
const w = window as any;
const stored = () => JSON.parse(localStorage.getItem(KEY) || '[]') as BufferedCall[];
/** Lets the microtasks queued so far run (those of the task that ends: the stub's write). */
const endOfTask = () => new Promise<void>((r) => setTimeout(r, 0));

/** Runs the stub (src/stub/snippet.ts) afresh on this window; returns the `analytics` array it defines. */
async function stub() {
  delete w.analytics;
  vi.resetModules();
  await import('../../src/stub/snippet');
  // importing ended a task's worth of microtasks already; calls below start a new "task" of the test
  return w.analytics;
}

const throwing = (name: string): never => {
  throw new DOMException(name, name);
};

/** Counts reads and writes of the buffer's key on `localStorage`, as the stub makes them (property access). */
function countStorage() {
  const real = localStorage;
  const count = { reads: 0, writes: 0 };
  const proxy = new Proxy(real, {
    get: (t, k) => (k == KEY && count.reads++, (t as any)[k]),
    set: (t, k, v) => (k == KEY && count.writes++, ((t as any)[k] = v), true),
  });
  vi.stubGlobal('localStorage', proxy);
  return count;
}

beforeEach(() => {
  localStorage.clear();
  // `load` inserts the bundle's <script>: not loaded here (happy-dom would report it cannot)
  vi.spyOn(document.head, 'append').mockImplementation(() => {});
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  localStorage.clear();
  delete w.analytics;
});

describe('the stub (src/stub/snippet.ts)', () => {
  it('writes the calls of a task to the buffer in one read and one write, at the end of the task', async () => {
    const a = await stub();
    const count = countStorage();
    a.page();
    for (let i = 0; i < 5; i++) a.track('E' + i, { i });
    a.load('key', { cdnUrl: 'data:text/javascript,' });
    expect(count, 'nothing written during the task').toEqual({ reads: 0, writes: 0 });
    await endOfTask();
    expect(count).toEqual({ reads: 1, writes: 1 });
    expect(stored().map((c) => [c[0], c[5]])).toEqual([['page', 0], ['track', 1], ['track', 2], ['track', 3], ['track', 4], ['track', 5], ['load', 6]]);
    expect(stored().every((c) => c[4] === a.invoked)).toBe(true);
  });

  it('writes each task once, adding its calls after those already in the buffer (of this page and others)', async () => {
    const other = ['track', ['Other Page'], ['https://site.test/other', '', ''], 1, 0.5, 0];
    localStorage.setItem(KEY, JSON.stringify([other]));
    const a = await stub();
    const count = countStorage();
    a.track('A1');
    a.track('A2');
    await endOfTask();
    a.identify('u1');
    await endOfTask();
    await endOfTask(); // a task without calls writes nothing
    expect(count.writes).toBe(2);
    expect(stored().map((c) => c[1][0])).toEqual(['Other Page', 'A1', 'A2', 'u1']);
  });

  it('returns the stub from every call and records each one in memory at once, with its time and page', async () => {
    const a = await stub();
    const before = Date.now();
    expect(a.track('T', { x: 1 })).toBe(a);
    expect(a.ecommerce.orderCompleted({ order_id: '1' })).toBe(a);
    expect(a.map((c: any) => c[0])).toEqual(['track', 'ecommerce.orderCompleted']);
    expect(a[0][1]).toEqual(['T', { x: 1 }]);
    expect(a[0][2]).toEqual([location.href, document.title, document.referrer]);
    expect(a[0][3]).toBeGreaterThanOrEqual(before);
    await endOfTask();
  });

  it('keeps the last 100 calls of all pages', async () => {
    const a = await stub();
    for (let i = 0; i < 60; i++) a.track('First ' + i);
    await endOfTask();
    for (let i = 0; i < 60; i++) a.track('Second ' + i);
    await endOfTask();
    const names = stored().map((c) => c[1][0]);
    expect(names).toHaveLength(100);
    expect(names[0]).toBe('First 20');
    expect(names[99]).toBe('Second 59');
  });

  it('writes a call made by a toJSON of the page while the buffer is written, in a write of its own', async () => {
    const a = await stub();
    let made = false;
    a.track('Outer', { toJSON: () => (made || ((made = true), a.track('Inner')), { ok: 1 }) });
    await endOfTask();
    expect(stored().map((c) => c[1][0])).toEqual(['Outer', 'Inner']);
    expect(stored()[0][1][1]).toEqual({ ok: 1 });
  });

  it('stores nothing of a task in which a load in consent-pending mode was recorded, nor after it; earlier tasks stay written', async () => {
    const a = await stub();
    a.track('Before Consent Load');
    await endOfTask();
    a.page();
    a.load('key', { consent: { categories: ['analytics'] }, cdnUrl: 'data:text/javascript,' });
    a.track('After');
    await endOfTask();
    a.track('Later');
    await endOfTask();
    expect(stored().map((c) => c[0] + ' ' + (c[1][0] ?? ''))).toEqual(['track Before Consent Load']);
    expect(a.map((c: any) => c[0]), 'all still recorded in memory').toEqual(['track', 'page', 'load', 'track', 'track']);
  });

  it('never throws into the page when storage fails; a failed write is tried again by the next task, a failed read is not', async () => {
    const errors: unknown[] = [];
    const onError = (e: unknown) => errors.push(e);
    process.on('uncaughtException', onError);
    try {
      const a = await stub();
      const count = { reads: 0, writes: 0 };
      const full = new Proxy({}, { get: () => (count.reads++, '[]'), set: () => (count.writes++, throwing('QuotaExceededError')) });
      vi.stubGlobal('localStorage', full);
      expect(() => a.track('One')).not.toThrow();
      await endOfTask();
      a.track('Two');
      await endOfTask();
      expect(count).toEqual({ reads: 2, writes: 2 });

      const blocked = new Proxy({}, { get: () => (count.reads++, throwing('SecurityError')) });
      vi.stubGlobal('localStorage', blocked);
      a.track('Three');
      await endOfTask();
      a.track('Four');
      await endOfTask();
      expect(count.reads, 'no write queued after a failed read').toBe(3);
      expect(a.map((c: any) => c[1][0])).toEqual(['One', 'Two', 'Three', 'Four']);
    } finally {
      process.off('uncaughtException', onError);
    }
    expect(errors).toEqual([]);
  });
});

/** Runs the stub on this window with `value` at `window.analytics` (as the page had it); returns what is there then. */
async function stubOver(value: unknown) {
  w.analytics = value;
  vi.resetModules();
  await import('../../src/stub/snippet');
  return w.analytics;
}

describe("the load options' own properties only (CONTRACT section 6: nothing on a prototype chooses the script)", () => {
  afterEach(() => {
    delete (Object.prototype as any).cdnUrl;
    delete (Object.prototype as any).consent;
  });
  // the src of each <script> the stub inserted (document.head.append is stubbed: nothing is loaded)
  const inserted = () => (document.head.append as unknown as { mock: { calls: HTMLScriptElement[][] } }).mock.calls.map((c) => c[0].getAttribute('src'));

  it('a polluted Object.prototype.cdnUrl or .consent changes neither the script nor what the stub writes', async () => {
    (Object.prototype as any).cdnUrl = 'https://evil.example/x.js';
    (Object.prototype as any).consent = { categories: ['x'] };
    const a = await stub();
    a.load('key', { apiHost: 'https://api.example' });
    a.track('Kept');
    expect(inserted()).toEqual(['https://cdn.test/analytics.min.js']);
    await endOfTask();
    // (not in consent-pending mode: the calls are written)
    expect(stored().map((c) => c[0])).toEqual(['load', 'track']);
  });

  it("the page's own cdnUrl and consent still count", async () => {
    const a = await stub();
    a.load('key', { cdnUrl: 'https://cdn.site.example/a.js', consent: { categories: ['analytics'] } });
    a.track('Held');
    expect(inserted()).toEqual(['https://cdn.site.example/a.js']);
    await endOfTask();
    expect(stored()).toEqual([]);
  });
});

describe('what the page has at window.analytics (security-3 L2: DOM clobbering)', () => {
  const elementWith = (names: string[]) => {
    const form = document.createElement('form');
    for (const n of names) form.append(Object.assign(document.createElement('input'), { name: n, value: '5' }));
    document.body.append(form);
    return form;
  };
  afterEach(() => (document.body.innerHTML = ''));

  for (const [label, value] of [
    ['an element (<img name="analytics">)', () => document.createElement('img')],
    ['an element whose children are named invoked, VERSION and push', () => elementWith(['invoked', 'VERSION', 'push', 'pid'])],
    ['a collection (two <a id="analytics">)', () => document.getElementsByTagName('a')],
    ['a window whose properties cannot be read (an <iframe> of another origin)', () => new Proxy({}, { get: () => throwing('SecurityError') })],
    ['an object that is not the library', () => ({ VERSION: 1 })],
    ['null', () => null],
  ] as const) {
    it(`${label} is replaced by the stub, which records and writes`, async () => {
      const a = await stubOver(value());
      expect(Array.isArray(a)).toBe(true);
      expect(a.invoked).toBeGreaterThan(0);
      expect(a.track('After Clobber')).toBe(a);
      a.ecommerce.orderCompleted({ order_id: '1' });
      await endOfTask();
      expect(stored().map((c) => c[0])).toEqual(['track', 'ecommerce.orderCompleted']);
    });
  }

  it('the library (a VERSION string) and a stub that ran already are kept as they are', async () => {
    const lib = { VERSION: '1.0.0', track: () => 'real' };
    expect(await stubOver(lib)).toBe(lib);
    expect(lib.track()).toBe('real');
    const first = await stub();
    first.track('First');
    const pid = first.invoked;
    expect(await stubOver(first)).toBe(first);
    expect(first.invoked).toBe(pid);
    expect(first.length).toBe(1);
    // analytics.js's stub (`invoked = true`) too
    const other = Object.assign([], { invoked: true });
    expect(await stubOver(other)).toBe(other);
    expect((other as any).track).toBeUndefined();
  });
});

describe('the stub and the bundle in the same task (takeOwn or takeOverBuffer before the stub writes)', () => {
  // (the bundle's own take-over, and the whole one of the lazy chunk)
  const takeOvers: [string, typeof takeOwn][] = [
    ['takeOwn', takeOwn],
    ['takeOverBuffer', (recorded, own, replay) => takeOverBuffer(bufferIO, recorded, own, replay)],
  ];
  it.each(takeOvers)('the bundle takes the calls still pending in memory, and the stub does not write them back (%s)', async (_, takeOverBuffer) => {
    const a = await stub();
    a.track('Pending 1');
    a.track('Pending 2');
    // What src/entry/browser.ts does when it runs: takes the calls off the array, then takes over the buffer. The replay
    // does not finish (the page is left before the messages are queued): nothing cleans the buffer up afterwards.
    const calls: BufferedCall[] = a.splice(0);
    const replayed: string[] = [];
    takeOverBuffer(calls, a.invoked, (c) => (replayed.push(c[1][0] as string), new Promise(() => {})));
    expect(replayed).toEqual(['Pending 1', 'Pending 2']);
    await endOfTask();
    // Not written back unclaimed: another page would take them again after the grace and send them twice.
    expect(stored().filter((c) => c[4] === a.invoked && !c[6])).toEqual([]);
  });

  it('a later task of the same page still writes the calls made to the stub array after the take-over', async () => {
    // (a page that kept a reference to a stub method: analytics.js's snippet behaves alike)
    const a = await stub();
    const track = a.track;
    a.track('Taken');
    a.splice(0);
    await endOfTask();
    track('Stale');
    await endOfTask();
    expect(stored().map((c) => c[1][0])).toEqual(['Stale']);
  });
});
