import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTabs, LEASE_MS } from '../../src/delivery/tabs';
import type { QueueRecord } from '../../src/delivery/queue';
import { fakeLocks } from './fake-locks';

// More of the tabs' contract (found missing by mutation testing, `npm run mutate`); the fake LockManager is
// fake-locks.ts.
const TAB = (id: string) => 'svc-analytics:tab:' + id;
const ADOPT = 'svc-analytics:adopt'; // the lock of `exclusive`

function useLocks(manager: unknown) {
  Object.defineProperty(navigator, 'locks', { configurable: true, get: () => manager });
}

const entered: ReturnType<typeof createTabs>[] = [];
function tabs(id: string, gone: () => void = () => {}) {
  const t = createTabs(id, gone);
  entered.push(t);
  return t;
}

afterEach(() => {
  entered.splice(0).forEach((t) => t._leave());
  delete (navigator as any).locks;
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

// Another page of the site on the tabs' BroadcastChannel: what it heard.
function listener() {
  const channel = new BroadcastChannel('svc-analytics:tabs');
  const heard: unknown[] = [];
  channel.onmessage = (e) => heard.push(e.data);
  return { channel, heard, close: () => channel.close() };
}

describe('tabs: the hello on the BroadcastChannel', () => {
  it("says hello on the site's channel once its lock is held, answers a newcomer's hello, and never answers an answer", async () => {
    const { manager } = fakeLocks();
    useLocks(manager);
    const other = listener();
    try {
      tabs('A')._enter();
      await vi.waitFor(() => expect(other.heard).toEqual([{ hello: 'A' }]));
      other.channel.postMessage({ hello: 'N' });
      await vi.waitFor(() => expect(other.heard).toEqual([{ hello: 'A' }, { hello: 'A', reply: 1 }]));
      // A watches the newcomer's lock
      await vi.waitFor(() => expect(manager.request.mock.calls.map((c) => c[0])).toContain(TAB('N')));
      other.channel.postMessage({ hello: 'M', reply: 1 });
      await vi.waitFor(() => expect(manager.request.mock.calls.map((c) => c[0])).toContain(TAB('M')));
      expect(other.heard).toHaveLength(2);
    } finally {
      other.close();
    }
  });

  it('ignores what is no hello on the channel (another script, another version): no answer, nothing watched', async () => {
    const { manager } = fakeLocks();
    useLocks(manager);
    const other = listener();
    try {
      tabs('A')._enter();
      await vi.waitFor(() => expect(other.heard).toEqual([{ hello: 'A' }]));
      const asked = manager.request.mock.calls.length;
      for (const junk of [null, 'hello', { hello: 5 }, { bye: 'X' }]) other.channel.postMessage(junk);
      // then a real hello, whose answer says every message before it was handled
      other.channel.postMessage({ hello: 'N' });
      await vi.waitFor(() => expect(other.heard).toEqual([{ hello: 'A' }, { hello: 'A', reply: 1 }]));
      expect(manager.request.mock.calls.slice(asked).map((c) => c[0])).toEqual([TAB('N')]);
    } finally {
      other.close();
    }
  });
});

describe('tabs: locks', () => {
  it('a lock manager that rejects with no reason at all is dropped, and exclusive work still runs', async () => {
    const manager = { request: vi.fn(() => Promise.reject(undefined)), query: vi.fn(async () => ({ held: [], pending: [] })) };
    useLocks(manager);
    const t = tabs('A');
    const ran = t._exclusive(async () => 'done');
    const timeout = new Promise((r) => setTimeout(() => r('never settled'), 1000));
    expect(await Promise.race([ran, timeout])).toBe('done');
    expect(t._leased()).toBe(true);
  });

  it('after a leave and a new enter (restored from the back/forward cache), exclusive work holds its lock until it is done', async () => {
    const { manager, held } = fakeLocks();
    useLocks(manager);
    const t = tabs('A');
    t._enter();
    await vi.waitFor(() => expect(held.has(TAB('A'))).toBe(true));
    t._leave();
    t._enter();
    let finish!: () => void;
    const work = t._exclusive(() => new Promise<void>((r) => (finish = r)));
    await vi.waitFor(() => expect(held.has(ADOPT)).toBe(true));
    await new Promise((r) => setTimeout(r, 20));
    expect(held.has(ADOPT)).toBe(true);
    finish();
    await work;
    await vi.waitFor(() => expect(held.has(ADOPT)).toBe(false));
  });
});

describe('tabs: without Web Locks', () => {
  it("a record exactly LEASE_MS old is still its tab's; one a ms older is an orphan", async () => {
    useLocks(undefined);
    vi.useFakeTimers({ toFake: ['Date'] });
    const t = tabs('A');
    const isOrphan = await t._orphans();
    const now = Date.now();
    const of = (age: number) => ({ id: 'r' + age, owner: 'B', queuedAt: now - age }) as QueueRecord;
    expect(isOrphan(of(LEASE_MS))).toBe(false);
    expect(isOrphan(of(LEASE_MS + 1))).toBe(true);
  });
});

describe('tabs: watching the other tabs', () => {
  it('a tab that left while it looked for the others (its lock manager slow to answer) still watches them once it enters again', async () => {
    const { manager, hold } = fakeLocks();
    useLocks(manager);
    const releaseB = await hold(TAB('B'));
    // the lock manager answers a query only when told
    const query = manager.query.getMockImplementation()!;
    const answers: (() => void)[] = [];
    manager.query.mockImplementation(() => new Promise((r) => answers.push(() => r(query()))));
    const gone = vi.fn();
    const a = tabs('A', gone);
    a._enter();
    await vi.waitFor(() => expect(answers).toHaveLength(1));
    a._leave(); // into the back/forward cache before the answer
    answers[0]();
    await new Promise((r) => setTimeout(r, 10));
    a._enter(); // restored
    await vi.waitFor(() => expect(answers).toHaveLength(2));
    answers[1]();
    await vi.waitFor(() => expect(manager.request.mock.calls.filter((c) => c[0] == TAB('B'))).toHaveLength(2)); // B's hold, A's watch
    releaseB();
    await vi.waitFor(() => expect(gone).toHaveBeenCalledTimes(1));
  });

  it('another tab adopting (holding the adopt lock) as this one enters is no tab gone', async () => {
    const { manager, hold } = fakeLocks();
    useLocks(manager);
    const releaseAdopt = await hold(ADOPT);
    const gone = vi.fn();
    tabs('A', gone)._enter();
    await vi.waitFor(() => expect(manager.query).toHaveBeenCalledTimes(1));
    await new Promise((r) => setTimeout(r, 20));
    expect(manager.request.mock.calls.map((c) => c[0]).filter((n) => n != ADOPT && n != TAB('A'))).toEqual([]);
    expect(gone).not.toHaveBeenCalled();
    releaseAdopt();
  });
});
