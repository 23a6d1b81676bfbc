// serverCookies after an opt-out (found by review 6): the opt-out asks the site's server nothing, and a sync whose
// turn comes after storing stopped asks nothing either.
import { net, QUIET } from '../harness';
import { describe, expect, it, vi } from 'vitest';
import { createAnalytics } from '../../src/api/analytics';
import { createTransforms } from '../../src/extend/transforms';
import { pluginRunner } from '../../src/extend/plugins';
import { linkTools } from '../../src/identity/tools';
import { syncCookies } from '../../src/identity/server-cookies';

const cookieCalls = () => net.fetch.mock.calls.filter((c) => String(c[0]).endsWith('/v1/cookies'));
const tasks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
};

describe('serverCookies and optOut', () => {
  it('optOut() asks the server nothing, and writes nothing of the sync again', async () => {
    const { api } = createAnalytics({
      transforms: (s, r) => createTransforms(s, r, () => Promise.resolve(pluginRunner)),
      tools: () => Promise.resolve(linkTools),
      plan: () => Promise.reject(new Error('no plan')),
    });
    api.load('wk_test', { ...QUIET, apiHost: '/ingest', serverCookies: true });
    await api.ready();
    await vi.waitFor(() => expect(cookieCalls()).toHaveLength(1), { timeout: 2000, interval: 10 });
    api.optOut();
    await tasks(5);
    expect(cookieCalls()).toHaveLength(1);
    expect(Object.keys(localStorage).filter((k) => k.startsWith('svc_server_cookies'))).toEqual([]);
  });

  it('a sync whose turn comes after storing stopped asks nothing', async () => {
    document.cookie = 'svc_anonymous_id=%22a%22; path=/';
    let open = true;
    syncCookies('/ingest/v1/batch', undefined, () => {}, () => open);
    open = false;
    await tasks(2);
    expect(cookieCalls()).toEqual([]);
    open = true;
    syncCookies('/ingest/v1/batch', undefined, () => {}, () => open);
    await tasks(2);
    expect(cookieCalls()).toHaveLength(1);
  });
});
