// Shared set-up of the API-level unit tests (an instance over fake IndexedDB and a fetch stub): import it first.
import 'fake-indexeddb/auto';
import { IDBFactory } from 'fake-indexeddb';
import { afterEach, beforeEach, vi } from 'vitest';
import { createAnalytics } from '../src/api/analytics';
import { sources } from '../src/sources';
import { createTransforms, type TransformsFactory } from '../src/extend/transforms';
import { pluginRunner } from '../src/extend/plugins';

// The middleware stage with the plugin runner at hand (the bundle loads it from its lazy chunk).
const eagerTransforms: TransformsFactory = (settings, report) => createTransforms(settings, report, () => Promise.resolve(pluginRunner));
import { addHelpers } from '../src/helpers/add-helpers';
import type { Message } from '../src/message/types';
import type { AnalyticsError } from '../src/message/errors';
import type { LoadOptions } from '../src/types';

// No timer-driven sends unless a test asks for them.
export const QUIET: LoadOptions = { flushAt: 1000, flushInterval: 3600000 };

/** The fetch stub of the current test (answers 200). */
export const net = { fetch: vi.fn() };

/** Every message sent so far, in order. */
export const sent = (): Message[] => net.fetch.mock.calls.flatMap((c) => JSON.parse(String((c[1] as RequestInit).body)).batch as Message[]);

export function clearCookies() {
  for (const part of document.cookie.split(/;\s*/)) {
    const name = part.split('=')[0];
    if (name) document.cookie = `${name}=; path=/; max-age=-1`;
  }
}

/** A loaded instance, and the errors it reported. */
export function start(options: LoadOptions = {}) {
  const { api: core, helperDeps } = createAnalytics({ transforms: eagerTransforms, sources: () => sources } as Parameters<typeof createAnalytics>[0]);
  const api = addHelpers(core, helperDeps); // as the bundle and the npm entry
  const errors: AnalyticsError[] = [];
  api.on('error', (e: AnalyticsError) => errors.push(e));
  api.load('wk_test', { ...QUIET, ...options });
  return { api, errors };
}

// Each test starts from an empty page: no IndexedDB, cookies, localStorage or DOM, and a fresh fetch stub.
beforeEach(() => {
  (globalThis as any).indexedDB = new IDBFactory();
  clearCookies();
  localStorage.clear();
  document.body.innerHTML = '';
  net.fetch = vi.fn(async () => ({ status: 200, headers: { get: () => null } }));
  vi.stubGlobal('fetch', net.fetch);
});
afterEach(() => vi.restoreAllMocks());
