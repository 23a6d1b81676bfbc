// From the review of the drop-in and consent work: races between source middleware, consent and opt-out; promises and the host page.
import { QUIET, sent, start } from '../harness';
import { describe, expect, it, vi } from 'vitest';
import { createAnalytics } from '../../src/api/analytics';
import { createTransforms, type TransformsFactory } from '../../src/extend/transforms';
import { pluginRunner } from '../../src/extend/plugins';

// The middleware stage with the plugin runner at hand (the bundle loads it from its lazy chunk).
const eagerTransforms: TransformsFactory = (settings, report) => createTransforms(settings, report, () => Promise.resolve(pluginRunner));
import type { LoadOptions } from '../../src/types';

const CONSENT: LoadOptions = { consent: { categories: ['analytics'] } };
// A source middleware that keeps each message until the test lets it go.
function gated(api: any) {
  const waiting: (() => void)[] = [];
  api.addSourceMiddleware(({ payload, next }: any) => void waiting.push(() => next(payload)));
  return () => waiting.splice(0).forEach((f) => f());
}
// Unhandled rejections seen while `fn` runs (vitest reports them too: the test then fails either way).
async function unhandled(fn: () => Promise<unknown>) {
  const seen: unknown[] = [];
  const h = (e: unknown) => seen.push(e);
  process.on('unhandledRejection', h);
  try {
    await fn();
    await new Promise((r) => setTimeout(r, 20));
  } finally {
    process.off('unhandledRejection', h);
  }
  return seen;
}

describe('a refusal after an asynchronous source middleware', () => {
  it('is not an unhandled rejection when the page ignores the promise (README "Calls")', async () => {
    const { api } = start();
    await api.ready();
    api.addSourceMiddleware(({ next }) => void setTimeout(() => next(null), 1)); // drops, later
    const seen = await unhandled(async () => {
      api.track('Ignored'); // analytics.js code never looks at the promise
      await new Promise((r) => setTimeout(r, 10));
    });
    expect(seen).toEqual([]);
  });
});

describe('a message a middleware still has', () => {
  it('is not sent after optOut() then optIn(), under the identity the opt-out erased', async () => {
    const { api } = start();
    await api.ready();
    const release = gated(api);
    const before = api.user().anonymousId();
    const p = api.track('Before opt-out');
    api.optOut();
    api.optIn();
    release();
    await p.catch(() => {});
    await api.flush();
    // the old anonymous id must never reach the API after the opt-out erased it
    expect(sent().filter((m) => m.anonymousId == before)).toEqual([]);
    await expect(p).rejects.toMatchObject({ code: 'opted_out' });
  });

  it('is discarded by a denial, even if a grant follows before the middleware passes it on', async () => {
    const { api } = start(CONSENT);
    await api.ready();
    const release = gated(api);
    const p = api.track('Made while pending');
    api.consent({ analytics: false }); // denial: "the held calls are discarded"
    api.consent({ analytics: true });
    release();
    await p.catch(() => {});
    await api.flush();
    expect(sent().map((m) => m.event)).toEqual([]);
  });

  it('carries the decision when consent is granted while it is in the middleware (CONTRACT 2 consent)', async () => {
    const { api } = start(CONSENT);
    await api.ready();
    const release = gated(api);
    const p = api.track('Made while pending');
    api.consent({ analytics: true });
    release();
    await p;
    await api.flush();
    const [m] = sent();
    expect(m.event).toBe('Made while pending');
    expect(m.context.consent).toEqual({ categoryPreferences: { analytics: true } });
  });
});

describe('held messages at the grant', () => {
  it('a held call whose promise resolved is delivered whatever decision object the site passes', async () => {
    const { api, errors } = start(CONSENT);
    await api.ready();
    // as close to the limit as hold() allows: 240 bytes + the listed categories kept free for the decision
    const small = await api.track('Big', { pad: '' });
    const base = new TextEncoder().encode(JSON.stringify(small.event)).length;
    const room = 240 + JSON.stringify([['analytics', false]]).length;
    const r = await api.track('Big', { pad: 'x'.repeat(32000 - room - base) });
    // a OneTrust-style decision: every category of the site, not only the listed one
    const decision: Record<string, boolean> = { analytics: true };
    for (let i = 0; i < 20; i++) decision[`C00${10 + i}_marketing_partner`] = i % 2 == 0;
    api.consent(decision);
    await api.flush();
    expect(errors.filter((e) => e.code == 'message_too_large')).toEqual([]);
    expect(sent().map((m) => m.messageId)).toContain(r.event.messageId);
  });
});

describe('the ready event', () => {
  it('fires once the library is loaded (README Events)', async () => {
    const { api } = createAnalytics({ transforms: eagerTransforms });
    const ready = vi.fn();
    api.on('ready', ready);
    api.load('wk_test', QUIET);
    await api.ready();
    await vi.waitFor(() => expect(ready).toHaveBeenCalledTimes(1));
  });
});

describe('a call made before load, refused at load', () => {
  it('is not an unhandled rejection (an opted-out visitor, npm code that calls before load)', async () => {
    document.cookie = 'svc_opt_out=true; path=/';
    const { api } = createAnalytics({ transforms: eagerTransforms });
    const seen = await unhandled(async () => {
      api.track('Early'); // ignored promise
      api.load('wk_test', QUIET);
      await new Promise((r) => setTimeout(r, 10));
    });
    expect(seen).toEqual([]);
  });
});
