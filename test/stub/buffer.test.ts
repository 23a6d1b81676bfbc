import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BUFFER_GRACE_MS, BUFFER_MAX_AGE_MS, bindingOf, bufferIO, DONE_KEPT_MS, othersWaiting, readBuffer, takeOwn, type BufferedCall } from '../../src/stub/buffer';
import { planBuffer, takeOverBuffer } from '../../src/stub/adopt';

// vitest.config.mjs defines __BUFFER_KEY__ for src/ as this.
const KEY = 'svc_buffer';
const NOW = Date.UTC(2026, 0, 1);
const OWN = 0.111; // this page's id (the stub's Math.random())
const P1 = 0.222; // other pages
const P2 = 0.333;

// A recorded call: [method, args, page, time, page id, seq, claimedAt?, done?]
function call(method: string, time: number, pid: number, seq: number, claimedAt?: number, done?: 1): BufferedCall {
  const c: unknown[] = [method, [method + '-' + seq], ['https://site.test/' + pid, 'Title', ''], time, pid, seq];
  if (claimedAt !== undefined || done) c.push(claimedAt);
  if (done) c.push(done);
  return c as BufferedCall;
}
const names = (calls: BufferedCall[]) => calls.map((c) => `${c[4]}:${c[5]}`);
const stored = () => JSON.parse(localStorage.getItem(KEY) || '[]') as BufferedCall[];
/** The buffer without the pages' loads `put` adds (seq -1). */
const storedCalls = () => stored().filter((c) => c[5] !== -1);

afterEach(() => {
  vi.restoreAllMocks();
});

// This page's binding (the write key and host of its `load`), and each page's `load` under it: the other pages'
// calls below are bound to it (a page's calls are replayed elsewhere only under its `load`'s binding).
const BOUND = bindingOf(['key']);
const loadOf = (pid: number, time: number) => ['load', ['key'], ['https://site.test/' + pid, 'Title', ''], time, pid, -1] as BufferedCall;
function withLoads(buffer: BufferedCall[]): BufferedCall[] {
  const pids = [...new Set(buffer.map((c) => c[4]))];
  return [...pids.map((p) => loadOf(p, Math.min(...buffer.filter((c) => c[4] === p).map((c) => c[3])))), ...buffer];
}
function bufferPlan(buffer: BufferedCall[], recorded: BufferedCall[], own: number | undefined, now: number) {
  const plan = planBuffer(bufferIO, withLoads(buffer), recorded, own, now, BOUND);
  return { ...plan, buffer: plan.buffer.filter((c) => c[5] !== -1) };
}
const put = (buffer: BufferedCall[]) => localStorage.setItem(KEY, JSON.stringify(withLoads(buffer)));
const take = (recorded: BufferedCall[], own: number | undefined, replay: (c: BufferedCall) => unknown) => takeOverBuffer(bufferIO, recorded, own, replay, BOUND);

describe('planBuffer', () => {
  it("replays this page's recorded calls in order, all but load", () => {
    const recorded = [call('load', NOW, OWN, 0), call('ready', NOW, OWN, 1), call('track', NOW, OWN, 2), call('on', NOW, OWN, 3), call('identify', NOW, OWN, 4)];
    const plan = bufferPlan(recorded.slice(), recorded, OWN, NOW);
    expect(names(plan.take)).toEqual([`${OWN}:1`, `${OWN}:2`, `${OWN}:3`, `${OWN}:4`]);
    expect(plan.next).toBeUndefined();
  });

  it('replays own calls the stub could not write to the buffer', () => {
    const recorded = [call('track', NOW, OWN, 0), call('track', NOW, OWN, 1)];
    expect(names(bufferPlan([], recorded, OWN, NOW).take)).toEqual([`${OWN}:0`, `${OWN}:1`]);
  });

  it('does not replay own calls the buffer shows claimed or done by another page', () => {
    const recorded = [call('track', NOW - 9000, OWN, 0), call('track', NOW - 9000, OWN, 1), call('track', NOW - 9000, OWN, 2)];
    const buffer = [call('track', NOW - 9000, OWN, 0, NOW - 1000), call('track', NOW - 9000, OWN, 1, NOW - 2000, 1), call('track', NOW - 9000, OWN, 2)];
    expect(names(bufferPlan(buffer, recorded, OWN, NOW).take)).toEqual([`${OWN}:2`]);
  });

  it("takes back this page's own calls that another page claimed and did not finish with within the grace", () => {
    const recorded = [call('track', NOW - 60000, OWN, 0), call('track', NOW - 60000, OWN, 1), call('track', NOW - 60000, OWN, 2)];
    const buffer = [
      call('track', NOW - 60000, OWN, 0, NOW - BUFFER_GRACE_MS), // claimed by a page that died before it was done
      call('track', NOW - 60000, OWN, 1, NOW - 1000), // claimed just now: that page is at work
      call('track', NOW - 60000, OWN, 2, NOW - 60000, 1), // done
    ];
    const plan = bufferPlan(buffer, recorded, OWN, NOW);
    expect(names(plan.take)).toEqual([`${OWN}:0`]);
    expect(plan.next).toBe(NOW - 1000 + BUFFER_GRACE_MS);
    expect(plan.buffer).toEqual([[...buffer[0].slice(0, 6), NOW], buffer[1], buffer[2]]);
  });

  it("takes another page's calls only once that page gave no news for BUFFER_GRACE_MS", () => {
    expect(BUFFER_GRACE_MS).toBe(5000);
    const buffer = [call('track', NOW, P1, 0), call('ready', NOW + 3000, P1, 1)]; // its latest news: NOW + 3000
    const due = NOW + 3000 + BUFFER_GRACE_MS;
    const early = bufferPlan(buffer, [], OWN, due - 1);
    expect(early.take).toEqual([]);
    expect(early.next).toBe(due);
    expect(early.buffer).toEqual(buffer);
    const plan = bufferPlan(buffer, [], OWN, due);
    expect(names(plan.take)).toEqual([`${P1}:0`]);
    expect(plan.next).toBeUndefined();
  });

  it("takes at once the calls of the page this one was opened from, made before it started, ahead of its own (a reset() before a logout link; found by review 6)", () => {
    // P1 (https://site.test/0.222) recorded reset() and navigated here 1 s later; P2 was open meanwhile, elsewhere.
    const buffer = [call('reset', NOW - 1000, P1, 0), call('track', NOW - 1000, P2, 0)];
    const mine = [call('page', NOW, OWN, 0)];
    const plan = planBuffer(bufferIO, withLoads(buffer), mine, OWN, NOW, BOUND, ['https://site.test/' + P1, NOW - 500]);
    expect(names(plan.take)).toEqual([`${P1}:0`, `${OWN}:0`]);
    expect(plan.next).toBe(NOW - 1000 + BUFFER_GRACE_MS); // P2's, as before
    // Not a page that recorded calls after this one started (it lives on: another tab), nor another URL.
    expect(names(planBuffer(bufferIO, withLoads(buffer), mine, OWN, NOW, BOUND, ['https://site.test/' + P1, NOW - 2000]).take)).toEqual([`${OWN}:0`]);
    expect(names(planBuffer(bufferIO, withLoads(buffer), mine, OWN, NOW, BOUND, ['https://site.test/other', NOW - 500]).take)).toEqual([`${OWN}:0`]);
  });

  it('takes only the message and identity calls of another page', () => {
    const methods = ['load', 'ready', 'on', 'off', 'debug', 'flush', 'user', 'identify', 'track', 'page', 'screen', 'group', 'alias', 'reset', 'setAnonymousId', 'ecommerce.orderCompleted', 'semantic.userDeleted'];
    const buffer = methods.map((m, i) => call(m, NOW - 60000, P1, i));
    expect(bufferPlan(buffer, [], OWN, NOW).take.map((c) => c[0])).toEqual(methods.slice(7));
  });

  it('re-takes a call claimed by a page that did not finish with it within the grace, never one marked done', () => {
    const buffer = [
      call('track', NOW - 60000, P1, 0, NOW - BUFFER_GRACE_MS), // claimed, not done, grace over
      call('track', NOW - 60000, P1, 1, NOW - 1000), // claimed just now: its page is at work
      call('track', NOW - 60000, P1, 2, NOW - 60000, 1), // done
    ];
    const plan = bufferPlan(buffer, [], OWN, NOW);
    expect(names(plan.take)).toEqual([`${P1}:0`]);
    expect(plan.next).toBe(NOW - 1000 + BUFFER_GRACE_MS);
  });

  it("replays other pages' calls first, in call-time order across pages, then this page's", () => {
    const buffer = [call('track', NOW - 30000, P2, 0), call('track', NOW - 50000, P1, 0), call('track', NOW - 20000, P2, 1), call('track', NOW - 40000, P1, 1)];
    const recorded = [call('track', NOW, OWN, 0), call('page', NOW, OWN, 1)];
    const plan = bufferPlan(buffer, recorded, OWN, NOW);
    expect(names(plan.take)).toEqual([`${P1}:0`, `${P1}:1`, `${P2}:0`, `${P2}:1`, `${OWN}:0`, `${OWN}:1`]);
  });

  it('looks again at the earliest time a waiting page becomes due', () => {
    const buffer = [call('track', NOW - 1000, P1, 0), call('track', NOW - 3000, P2, 0), call('track', NOW - 2000, P2, 1)];
    expect(bufferPlan(buffer, [], OWN, NOW).next).toBe(NOW - 2000 + BUFFER_GRACE_MS);
  });

  it('claims the calls it takes at now, leaving the others and its input as they were', () => {
    const buffer = [call('track', NOW - 60000, P1, 0), call('track', NOW - 1000, P2, 0), call('track', NOW - 9000, OWN, 0)];
    const before = JSON.stringify(buffer);
    const plan = bufferPlan(buffer, [call('track', NOW - 9000, OWN, 0)], OWN, NOW);
    expect(plan.buffer.map((c) => c[6])).toEqual([NOW, undefined, NOW]);
    expect(plan.buffer[1]).toBe(buffer[1]);
    expect(plan.buffer[0].slice(0, 6)).toEqual(buffer[0].slice(0, 6));
    expect(JSON.stringify(buffer)).toBe(before);
  });

  it('counts every buffered call as another page\'s when this page has no id', () => {
    const buffer = [call('track', NOW - 60000, P1, 0), call('track', NOW - 60000, OWN, 0)];
    expect(names(bufferPlan(buffer, [], undefined, NOW).take)).toEqual([`${P1}:0`, `${OWN}:0`]);
  });
});

describe('binding (CONTRACT section 6) and expiry', () => {
  const at = (pid: number, key: string, options?: object) => [
    ['load', options ? [key, options] : [key], ['https://site.test/', '', ''], NOW - 60000, pid, 0],
    ['track', ['E' + pid], ['https://site.test/', '', ''], NOW - 60000, pid, 1],
  ] as BufferedCall[];

  it('names the write key and batch URL of a load', () => {
    expect(bindingOf(['K1'])).toBe('K1 https://cdp.svc.example/v1/batch');
    expect(bindingOf(['K1', { apiHost: 'h1.example/' }])).toBe('K1 https://h1.example/v1/batch');
    expect(bindingOf(['K1', { apiHost: '/collect' }])).toBe(`K1 ${location.origin}/collect/v1/batch`);
    expect(bindingOf(['K1', { region: 'eu' }])).not.toBe(bindingOf(['K1']));
    // own properties only
    expect(bindingOf(['K1', Object.create({ apiHost: 'evil.example' })])).toBe(bindingOf(['K1']));
  });

  it("takes another page's calls only when that page's first load named this page's write key and host", () => {
    const buffer = [
      ...at(0.21, 'K1', { apiHost: 'h1.example' }),
      ...at(0.22, 'K2', { apiHost: 'h1.example' }),
      ...at(0.23, 'K1', { apiHost: 'h2.example' }),
      ...at(0.24, 'K1', { apiHost: 'https://h1.example/' }),
      // a page whose load is not in the buffer (consent-pending, or pushed out)
      ['track', ['E0.25'], ['https://site.test/', '', ''], NOW - 60000, 0.25, 0] as BufferedCall,
      // a page that loaded K1 on h1 first, then another
      ...at(0.26, 'K1', { apiHost: 'h1.example' }),
      ['load', ['K2'], ['https://site.test/', '', ''], NOW - 60000, 0.26, 2] as BufferedCall,
    ];
    const taken = (bound?: string) => planBuffer(bufferIO, buffer, [], OWN, NOW, bound).take.map((c) => c[1][0]);
    expect(taken(bindingOf(['K1', { apiHost: 'h1.example' }]))).toEqual(['E0.21', 'E0.24', 'E0.26']);
    expect(taken(bindingOf(['K2', { apiHost: 'h1.example' }]))).toEqual(['E0.22']);
    expect(taken(bindingOf(['K1']))).toEqual([]);
    // a page with no load of its own takes no other page's calls
    expect(taken(undefined)).toEqual([]);
    // another source's calls are left as they were, unclaimed
    expect(planBuffer(bufferIO, buffer, [], OWN, NOW, bindingOf(['K2', { apiHost: 'h1.example' }])).buffer.filter((c) => c[6]).map((c) => c[4])).toEqual([0.22]);
  });

  it('drops calls older than BUFFER_MAX_AGE_MS (7 days), from the plan and from storage, even when it takes nothing', async () => {
    expect(BUFFER_MAX_AGE_MS).toBe(7 * 864e5);
    const old = at(0.3, 'K9').map((c) => Object.assign([...c], { 3: NOW - BUFFER_MAX_AGE_MS }) as BufferedCall);
    const fresh = at(0.4, 'K9');
    expect(planBuffer(bufferIO, [...old, ...fresh], [], OWN, NOW, BOUND).buffer).toEqual(fresh);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(NOW);
    try {
      localStorage.setItem(KEY, JSON.stringify([...old, ...fresh]));
      takeOverBuffer(bufferIO, [], OWN, () => {}, BOUND);
      expect(stored()).toEqual(fresh);
    } finally {
      vi.useRealTimers();
      localStorage.clear();
    }
  });
});

// The bundle takes its own calls itself (`takeOwn`); the whole take-over (`takeOverBuffer`) comes with the lazy chunk,
// loaded only when `othersWaiting` says the buffer may hold calls another page left to this one.
describe('takeOwn and othersWaiting (the take-over of other pages\' calls is an edge)', () => {
  const mine = [call('load', NOW - 10, OWN, 0), call('track', NOW - 10, OWN, 1), call('page', NOW - 10, OWN, 2), call('ready', NOW - 10, OWN, 3)];
  const other = (pid: number, method = 'track', claimedAt?: number, done?: 1) => [loadOf(pid, NOW - 60000), call(method, NOW - 60000, pid, 0, claimedAt, done)];
  const cases: [string, BufferedCall[], boolean][] = [
    ['empty', [], false],
    ["this page's calls only", mine, false],
    ["this page's calls, one done by another page", [mine[0], mine[1], call('page', NOW - 10, OWN, 2, NOW - 9000, 1)], false],
    ["this page's calls, one claimed by another page that may not finish", [mine[0], call('track', NOW - 10, OWN, 1, NOW - 9000), mine[2]], true],
    ["another page's calls all done, one long ago", [...mine, ...other(P1, 'track', NOW - 1000, 1), call('page', NOW - DONE_KEPT_MS - 60000, P1, 1, NOW - DONE_KEPT_MS - 1, 1)], false],
    ["another page's calls that make no message", [...mine, ...other(P1, 'ready')], false],
    ["another page's expired calls", [...mine, loadOf(P1, NOW - BUFFER_MAX_AGE_MS), call('track', NOW - BUFFER_MAX_AGE_MS, P1, 0)], false],
    ["another page's calls under another write key", [...mine, ['load', ['other-key'], ['https://site.test/', '', ''], NOW - 60000, P1, -1] as BufferedCall, call('track', NOW - 60000, P1, 0)], false],
    ["another page's calls with no load in the buffer", [...mine, call('track', NOW - 60000, P1, 0)], false],
    ["another page's calls to take", [...mine, ...other(P1)], true],
    ["another page's calls claimed by a page that did not finish", [...mine, ...other(P2, 'identify', NOW - 60000)], true],
  ];
  // Runs a take-over on `buffer` at NOW: what it replayed, and the buffer once their messages are queued.
  async function run(takeOver: (replay: (c: BufferedCall) => unknown) => () => void, buffer: BufferedCall[]) {
    localStorage.setItem(KEY, JSON.stringify(buffer));
    const replayed: string[] = [];
    takeOver((c) => void replayed.push(`${c[4]}:${c[5]}`));
    await Promise.resolve();
    await new Promise((r) => setTimeout(r));
    return { replayed, stored: stored() };
  }
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW);
  });
  afterEach(() => {
    vi.useRealTimers();
    localStorage.clear();
  });
  it.each(cases)('%s', async (_, buffer, waiting) => {
    expect(othersWaiting(buffer, OWN, BOUND, NOW)).toBe(waiting);
    // (a page with no binding takes no other page's calls)
    expect(othersWaiting(buffer, OWN, undefined, NOW)).toBe(false);
    const whole = await run((replay) => takeOverBuffer(bufferIO, mine, OWN, replay, BOUND), buffer);
    const own = await run((replay) => takeOwn(mine, OWN, replay), buffer);
    // where nothing of another page waits, the bundle's own take-over does what the whole one does
    if (!waiting) expect(own).toEqual(whole);
    // and where something does, the whole one takes more (at once, or once the grace time passed)
    else expect(planBuffer(bufferIO, buffer, mine, OWN, NOW + BUFFER_GRACE_MS * 30, BOUND).take.length).toBeGreaterThan(own.replayed.length);
  });
  it("without the chunk, leaves the calls of this page another page claimed, and the load that binds them, to a later page", async () => {
    const claimed = call('track', NOW - 10, OWN, 1, NOW - 9000);
    const load = loadOf(OWN, NOW - 10);
    const own = await run((replay) => takeOwn([load, ...mine.slice(1)], OWN, replay), [load, claimed, mine[2], mine[3]]);
    expect(own.replayed).toEqual([`${OWN}:2`, `${OWN}:3`]);
    expect(own.stored).toEqual([load, claimed]);
    // (and the whole take-over, once a later page's grace time passed, takes it)
    expect(planBuffer(bufferIO, own.stored, [], 0.9, NOW + BUFFER_GRACE_MS * 30, BOUND).take).toEqual([claimed]);
  });
});

describe('readBuffer', () => {
  beforeEach(() => localStorage.clear());

  it('keeps only entries shaped like recorded calls', () => {
    const good = call('track', NOW, P1, 0);
    localStorage.setItem(KEY, JSON.stringify([good, 'x', null, ['track'], ['track', [], 'page', NOW, P1, 1], ['track', [], [], 'time', P1, 2], ['track', [], [], NOW, null, 3]]));
    expect(readBuffer()).toEqual([good]);
  });

  it('is empty when the buffer is absent, not JSON, not a list, or storage throws', () => {
    expect(readBuffer()).toEqual([]);
    localStorage.setItem(KEY, '{not json');
    expect(readBuffer()).toEqual([]);
    localStorage.setItem(KEY, '{"a":1}');
    expect(readBuffer()).toEqual([]);
    const getItem = vi.spyOn(localStorage, 'getItem').mockImplementation(() => {
      throw new DOMException('blocked', 'SecurityError');
    });
    try {
      expect(readBuffer()).toEqual([]);
    } finally {
      getItem.mockRestore(); // restoreAllMocks does not restore a spy on happy-dom's localStorage
    }
  });
});

describe('takeOverBuffer', () => {
  beforeEach(() => {
    localStorage.clear();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(NOW);
  });
  afterEach(() => {
    vi.useRealTimers();
    localStorage.clear();
  });

  // Lets the replays' promise chains and the final buffer write run (setImmediate is not faked).
  const settle = () => new Promise<void>((r) => setImmediate(r));

  it("replays this page's calls and then removes them from the buffer", async () => {
    const recorded = [call('load', NOW, OWN, 0), call('track', NOW, OWN, 1), call('identify', NOW, OWN, 2)];
    const other = call('track', NOW - 1000, P1, 0); // its page may still be loading its bundle
    put([...recorded, other]);
    const replay = vi.fn((_c: BufferedCall) => Promise.resolve());
    take(recorded, OWN, replay);
    expect(replay.mock.calls.map((c) => c[0][0])).toEqual(['track', 'identify']);
    await settle();
    expect(storedCalls()).toEqual([other]);
  });

  it('claims the calls it takes before it replays them', () => {
    const other = call('track', NOW - 60000, P1, 0);
    put([other]);
    let seen: BufferedCall[] | undefined;
    take([], OWN, () => void (seen = storedCalls()));
    expect(seen).toEqual([[...other, NOW]]);
  });

  it("marks another page's calls done once they are queued, so that its late bundle skips them", async () => {
    const late = [call('ready', NOW - 60000, P1, 0), call('track', NOW - 60000, P1, 1), call('page', NOW - 59000, P1, 2)];
    put(late);
    const queued: (() => void)[] = [];
    const replay = vi.fn(() => new Promise<void>((r) => queued.push(r)));
    take([], OWN, replay);
    expect(replay).toHaveBeenCalledTimes(2);
    queued[0]();
    await settle();
    expect(storedCalls().every((c) => !c[7])).toBe(true); // not done before all are queued
    queued[1]();
    await settle();
    // done and kept for the late bundle; its calls that are not replayed are dropped
    expect(storedCalls()).toEqual([
      [...late[1], NOW, 1],
      [...late[2], NOW, 1],
    ]);

    // That page's bundle arrives: it sends nothing twice (its ready() callback is its own to run), and clears its
    // calls from the buffer.
    const lateReplay = vi.fn();
    take(late, P1, lateReplay);
    expect(lateReplay.mock.calls.map((c) => c[0][0])).toEqual(['ready']);
    await settle();
    expect(storedCalls()).toEqual([]);
    expect(localStorage.getItem(KEY)).toBeNull();
  });

  it("keeps an adopted page's load: the calls that page, still open with no bundle, makes afterwards are taken by a later page (found by review 9)", async () => {
    const early = call('page', NOW - 60000, P1, 0);
    put([early]);
    take([], OWN, () => Promise.resolve());
    await settle();
    expect(stored().some((c) => c[0] == 'load' && c[4] === P1), "P1's load stays").toBe(true);
    // P1, whose bundle failed, records another call; a later page, once P1 gave no news for the grace, takes it only.
    const later = call('track', NOW + 1000, P1, 1);
    localStorage.setItem(KEY, JSON.stringify([...stored(), later]));
    const plan = planBuffer(bufferIO, readBuffer(), [], P2, NOW + 1000 + BUFFER_GRACE_MS, BOUND);
    expect(names(plan.take)).toEqual([`${P1}:1`]);
  });

  it('marks the calls done even when their replay fails', async () => {
    put([call('track', NOW - 60000, P1, 0), call('track', NOW - 60000, P1, 1)]);
    take([], OWN, (c) => (c[5] == 0 ? Promise.reject(new Error('invalid')) : Promise.resolve()));
    await settle();
    expect(storedCalls().map((c) => c[7])).toEqual([1, 1]);
  });

  it('forgets done marks older than DONE_KEPT_MS', async () => {
    const old = call('track', NOW - DONE_KEPT_MS - 60000, P2, 0, NOW - DONE_KEPT_MS, 1);
    const recent = call('track', NOW - 60000, P2, 1, NOW - 1000, 1);
    put([old, recent, call('track', NOW - 60000, P1, 0)]);
    take([], OWN, () => Promise.resolve());
    await settle();
    expect(storedCalls().map((c) => `${c[4]}:${c[5]}`)).toEqual([`${P2}:1`, `${P1}:0`]);
  });

  it("takes another page's calls when they come due, without being called again", async () => {
    const other = call('track', NOW - 1000, P1, 0);
    put([other]);
    const replay = vi.fn((_c: BufferedCall) => Promise.resolve());
    take([call('track', NOW, OWN, 0)], OWN, replay);
    expect(replay).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(BUFFER_GRACE_MS - 1000 - 1);
    expect(replay).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(replay).toHaveBeenCalledTimes(2);
    expect(replay.mock.calls[1][0].slice(0, 6)).toEqual(other);
    await settle();
    expect(storedCalls()).toEqual([[...other, NOW + BUFFER_GRACE_MS - 1000, 1]]);
  });

  it('marks a taken call done at index 7, its claim time at 6, even when its claim was lost from the buffer meanwhile', async () => {
    const other = call('track', NOW - 60000, P1, 0);
    put([other]);
    let queued!: () => void;
    take([], OWN, () => new Promise<void>((r) => (queued = r)));
    expect(storedCalls()).toEqual([[...other, NOW]]);
    // Another page writes the buffer as it read it before our claim: the entry is unclaimed again (6 items).
    put([other]);
    queued();
    await settle();
    expect(storedCalls()).toEqual([[...other, NOW, 1]]);
    // A later page, well after the grace, sends nothing again.
    vi.setSystemTime(NOW + 60000);
    const later = vi.fn(() => Promise.resolve());
    take([], P2, later);
    await settle();
    expect(later).not.toHaveBeenCalled();
  });

  it('keeps its own call claimed by a page at work, drops its own calls taken or done, and takes the claimed one by its timer once the claim is stale', async () => {
    const claimed = call('track', NOW - 1000, OWN, 0, NOW - 1000); // another page's bundle claimed it a moment ago
    const free = call('page', NOW - 1000, OWN, 1);
    const doneElsewhere = call('identify', NOW - 1000, OWN, 2, NOW - 2000, 1);
    put([claimed, free, doneElsewhere]);
    const recorded = [call('track', NOW - 1000, OWN, 0), call('page', NOW - 1000, OWN, 1), call('identify', NOW - 1000, OWN, 2)];
    const replay = vi.fn((_c: BufferedCall) => Promise.resolve());
    take(recorded, OWN, replay);
    expect(names(replay.mock.calls.map((c) => c[0]))).toEqual([`${OWN}:1`]);
    await settle();
    expect(storedCalls()).toEqual([claimed]);
    // That page never marks it done: once its claim is BUFFER_GRACE_MS old, this page takes it back.
    await vi.advanceTimersByTimeAsync(BUFFER_GRACE_MS - 1000 - 1);
    expect(replay).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(names(replay.mock.calls.map((c) => c[0]))).toEqual([`${OWN}:1`, `${OWN}:0`]);
    expect(replay.mock.calls[1][0].slice(0, 6)).toEqual(claimed.slice(0, 6));
    await settle();
    expect(storedCalls()).toEqual([]);
  });

  it('leaves its own call claimed by a page at work to a later page, which takes it once the claim is stale', async () => {
    const claimed = call('track', NOW - 1000, OWN, 0, NOW - 1000);
    const free = call('page', NOW - 1000, OWN, 1);
    put([claimed, free]);
    const replay = vi.fn((_c: BufferedCall) => Promise.resolve());
    take([call('track', NOW - 1000, OWN, 0), call('page', NOW - 1000, OWN, 1)], OWN, replay);
    await settle();
    expect(names(replay.mock.calls.map((c) => c[0]))).toEqual([`${OWN}:1`]);
    expect(storedCalls()).toEqual([claimed]);
    // This page goes away before its own look again; the claiming page never finishes.
    vi.clearAllTimers();
    const at = NOW - 1000 + BUFFER_GRACE_MS;
    vi.setSystemTime(at);
    const later = vi.fn((_c: BufferedCall) => Promise.resolve());
    take([], P2, later);
    expect(later.mock.calls.map((c) => c[0].slice(0, 6))).toEqual([claimed.slice(0, 6)]);
    await settle();
    expect(storedCalls()).toEqual([[...claimed.slice(0, 6), at, 1]]);
  });

  it('replays its own calls where localStorage throws', async () => {
    const blocked = () => {
      throw new DOMException('blocked', 'SecurityError');
    };
    // restoreAllMocks does not restore a spy on happy-dom's localStorage: these are restored here
    const spies = [vi.spyOn(localStorage, 'getItem').mockImplementation(blocked), vi.spyOn(localStorage, 'setItem').mockImplementation(blocked)];
    const replay = vi.fn();
    try {
      expect(() => take([call('track', NOW, OWN, 0), call('page', NOW, OWN, 1)], OWN, replay)).not.toThrow();
      await settle();
    } finally {
      spies.forEach((s) => s.mockRestore());
    }
    expect(replay.mock.calls.map((c) => c[0][0])).toEqual(['track', 'page']);
  });

  it('reads and writes the buffer without the JSON a page may have replaced', async () => {
    const other = call('track', NOW - 60000, P1, 0);
    put([other]);
    const { parse, stringify } = JSON;
    JSON.parse = () => {
      throw new Error('page parse');
    };
    JSON.stringify = () => 'page';
    const replay = vi.fn(() => Promise.resolve());
    try {
      take([], OWN, replay);
      await settle();
    } finally {
      Object.assign(JSON, { parse, stringify });
    }
    expect(replay).toHaveBeenCalledTimes(1);
    expect(storedCalls()).toEqual([[...other, NOW, 1]]);
  });
});
