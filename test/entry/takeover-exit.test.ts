// A page left while the bundle is still starting (found by review 9): the stub's recorded calls are replayed and
// leave with the exit hand-off, and the stub's buffer says this page is done with them, so the next page of the site
// does not send them again under new message ids (a store that commits only later, or never, must not decide it).
import { QUIET, net } from '../harness';
import { expect, it, vi } from 'vitest';
import { bindingOf, bufferIO, readBuffer } from '../../src/stub/buffer';
import { planBuffer } from '../../src/stub/adopt';

const w = window as any;

it("the next page of the site takes none of the calls of a page left during start-up", async () => {
  delete w.analytics;
  vi.resetModules();
  vi.spyOn(document.head, 'append').mockImplementation(() => {});
  await import('../../src/stub/snippet');
  const stub = w.analytics;
  stub.load('wk_test', { ...QUIET });
  stub.page();
  stub.track('Stub Track');
  await new Promise((r) => setTimeout(r, 0)); // the end of the task: the stub wrote them
  expect(readBuffer().map((c) => c[0])).toEqual(['load', 'page', 'track']);
  const beacons: string[] = [];
  vi.spyOn(navigator, 'sendBeacon').mockImplementation((_u, body) => (beacons.push(String(body)), true));
  // the bundle arrives, and the visitor leaves before its start-up tasks ran
  vi.resetModules();
  await import('../../src/entry/browser');
  try {
    window.dispatchEvent(Object.assign(new Event('pagehide'), { persisted: false }));
    Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange'));
    // they left with the exit hand-off (a beacon, or a keepalive request)
    await vi.waitFor(() => expect(beacons.length + net.fetch.mock.calls.length).toBeGreaterThan(0), { timeout: 2000, interval: 10 });
    const handed = [...beacons, ...net.fetch.mock.calls.map((c) => String((c[1] as RequestInit).body))].flatMap((b) => JSON.parse(b).batch.map((m: { type: string; event?: string }) => m.event || m.type));
    expect(handed).toEqual(['page', 'Stub Track']);
    // what a second page of the site, with the same key and host, takes once the grace time passed
    const plan = planBuffer(bufferIO, readBuffer(), [], 0.123, Date.now() + 60000, bindingOf(['wk_test', { ...QUIET }]));
    expect(plan.take.map((c) => c[0])).toEqual([]);
  } finally {
    Object.defineProperty(document, 'visibilityState', { value: 'visible', configurable: true });
    delete w.analytics;
  }
});
