import { afterEach, expect, it, vi } from 'vitest';
import { createQueue } from '../../src/delivery/queue';
import { createHandoff } from '../../src/delivery/handoff';
import { browserPlatform } from '../../src/delivery/platform';
import type { Transport } from '../../src/delivery/transport';
import { record } from '../fake-queue';

afterEach(() => localStorage.clear());

it('where IndexedDB is unusable, what each hide hands to the browser does not stay in the exit note for ever', async () => {
  delete (globalThis as any).indexedDB;
  const queue = createQueue('me', { maxCount: 1000, maxBytes: 1e9, maxAgeMs: 1e9 }, { _expired: vi.fn(), _fallback: vi.fn() });
  const handoff = createHandoff({ _queue: queue, _transport: { _beacon: () => true } as unknown as Transport, _platform: browserPlatform(), url: 'https://api.test/v1/batch', writeKey: 'wk', emit: vi.fn() });
  for (let i = 0; i < 3; i++) {
    await queue._add(record());
    handoff._exit('hidden', false);
    for (let j = 0; j < 5; j++) await new Promise((r) => setImmediate(r));
  }
  expect(JSON.parse(localStorage.getItem('svc_sent') || '[]')).toEqual([]);
});
