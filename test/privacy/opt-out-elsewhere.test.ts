// An opt-out made in another tab of the site that this page has not heard of yet (CONTRACT section 2 `optOut`;
// issue 27): the check delivery makes before each request reads the stored choice, so nothing more leaves.
import { net, sent, start } from '../harness';
import { describe, expect, it, vi } from 'vitest';
import { createStore, keys } from 'idb-keyval';

/** A loaded instance that sent one message ('Sent') and waits a long interval before the next request. */
async function sentOne() {
  const { api } = start({ flushAt: 1000, flushInterval: 3600000 });
  await api.ready();
  await api.track('Sent');
  await vi.waitFor(() => expect(sent().map((m) => m.event)).toEqual(['Sent']));
  return api;
}

describe('an opt-out stored by another tab, before its storage event reaches this page', () => {
  it('stops every send at once, erases the queue, and refuses later calls (a page frozen as another tab opted out runs its overdue timers first)', async () => {
    const api = await sentOne();
    // (sent a moment ago: this one waits for the interval)
    await api.track('Waiting');
    // Another tab opts out: it stores the choice (a cookie, and localStorage); no storage event has come here yet.
    document.cookie = 'svc_opt_out=true; path=/';
    localStorage.setItem('svc_opt_out', 'true');
    await api.flush();
    await new Promise((r) => setTimeout(r, 50));
    expect(sent().map((m) => m.event)).toEqual(['Sent']);
    expect(net.fetch).toHaveBeenCalledTimes(1);
    await vi.waitFor(async () => expect(await keys(createStore('svc-analytics', 'queue'))).toEqual([]));
    await expect(api.track('After')).rejects.toMatchObject({ code: 'opted_out' });
    expect(sent().map((m) => m.event)).toEqual(['Sent']);
  });

  it('refuses a call made before any send looked (opted_out), and sends nothing of what waited', async () => {
    const api = await sentOne();
    await api.track('Waiting');
    document.cookie = 'svc_opt_out=true; path=/';
    // (a later task: the first call of a task looks)
    await new Promise((r) => setTimeout(r));
    await expect(api.track('After')).rejects.toMatchObject({ code: 'opted_out' });
    await api.flush();
    await new Promise((r) => setTimeout(r, 50));
    expect(sent().map((m) => m.event)).toEqual(['Sent']);
  });

  it("looks once a task: a later call of the task that looked is queued, and the next request's look erases it unsent", async () => {
    const api = await sentOne();
    const first = api.track('First');
    document.cookie = 'svc_opt_out=true; path=/';
    const second = api.track('Second');
    await Promise.allSettled([first, second]);
    await api.flush();
    await new Promise((r) => setTimeout(r, 50));
    expect(sent().map((m) => m.event)).toEqual(['Sent']);
    await vi.waitFor(async () => expect(await keys(createStore('svc-analytics', 'queue'))).toEqual([]));
    await expect(api.track('After')).rejects.toMatchObject({ code: 'opted_out' });
  });

  it('a page whose setTimeout throws: the call is answered, never thrown, and still looks', async () => {
    const { api } = start({ flushAt: 1000, flushInterval: 3600000 });
    await api.ready();
    await new Promise((r) => setTimeout(r));
    const real = globalThis.setTimeout;
    let call: Promise<unknown> | undefined;
    globalThis.setTimeout = (() => {
      throw new Error('broken by the page');
    }) as never;
    try {
      call = api.track('Broken Timers') as Promise<unknown>;
    } finally {
      globalThis.setTimeout = real;
    }
    await expect(call).resolves.toBeTruthy();
    document.cookie = 'svc_opt_out=true; path=/';
    await new Promise((r) => setTimeout(r));
    await expect(api.track('After')).rejects.toMatchObject({ code: 'opted_out' });
  });
});
