import { test, expect } from '@playwright/test';
import { buildPlain, format, measure } from '../scripts/call-path.mjs';

// Issue 28: from the API method to `fetch`, at most 15 calls through at most 8 files; at most two gate entries and one
// look at the middleware stage per call. The chain is the code's structure, not timing: measured by
// scripts/call-path.mjs (read its head for the counting rule) on an unminified build of the bundle, in Chromium.
test('track() after ready reaches fetch in at most 15 calls through at most 8 files, with two gate entries and one middleware check', async ({ page }) => {
  test.setTimeout(120_000);
  const result = await measure(page, await buildPlain());
  console.log(format(result, 'the bundle unminified'));
  // The whole chain was seen (an async parent lost would count too few): from the API method to the one caller of fetch.
  expect(result.chain.at(-1)).toMatchObject({ file: 'src/api/analytics.ts' });
  expect(result.chain[0]).toMatchObject({ file: 'src/delivery/transport.ts', fn: '_post' });
  expect(result.calls).toBeLessThanOrEqual(15);
  expect(result.files).toBeLessThanOrEqual(8);
  // The call's own entries: admitted once, committed once (delivery asks `_open` before it sends: not the call's).
  expect(result.gate).toMatchObject({ _admit: 1, _commit: 1 });
  expect(Object.keys(result.gate).filter((k) => k != '_open')).toEqual(['_admit', '_commit']);
  expect(result.middleware).toBe(1);
});
