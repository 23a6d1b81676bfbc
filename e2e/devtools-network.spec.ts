// What the browser's developer tools show of our batch requests (Chromium, over the DevTools protocol): a batch the
// API received and answered is a finished request, not a failed one (net::ERR_ABORTED, `canceled: true`).
import { test, expect, ready } from './fixtures';

test('batch requests the API answered finish in the Network panel: none is reported failed or canceled', async ({ page, site, collector }) => {
  test.setTimeout(30_000);
  const cdp = await page.context().newCDPSession(page);
  const batches = new Map<string, string>(); // requestId → url
  const finished = new Set<string>();
  const failed = new Map<string, { errorText: string; canceled?: boolean }>();
  cdp.on('Network.requestWillBeSent', (e) => e.request.url.includes('/v1/batch') && batches.set(e.requestId, e.request.url));
  cdp.on('Network.loadingFinished', (e) => batches.has(e.requestId) && finished.add(e.requestId));
  cdp.on('Network.loadingFailed', (e) => {
    if (batches.has(e.requestId)) failed.set(e.requestId, { errorText: e.errorText, canceled: e.canceled });
  });
  await cdp.send('Network.enable');

  await page.goto(site.page('/basic.html'));
  await ready(page);
  // Three separate batches: each waits for the one before to arrive (the first of a quiet spell goes at once, the
  // next with flush()).
  for (let i = 0; i < 3; i++) {
    const id: string = await page.evaluate(async (i) => {
      const a = (window as any).analytics;
      const id = (await a.track('Seen In DevTools', { i })).event.messageId;
      await a.flush();
      return id;
    }, i);
    await collector.waitFor(1, { messageId: id }, 10_000);
  }
  // Every batch request the page made has come to an end in the protocol's view, one way or the other.
  const ended = () => [...batches.keys()].filter((id) => finished.has(id) || failed.has(id)).length;
  await expect.poll(() => batches.size >= 3 && ended() == batches.size, { timeout: 10_000 }).toBe(true);
  expect([...failed.values()]).toEqual([]);
  expect(finished.size).toBe(batches.size);
});
