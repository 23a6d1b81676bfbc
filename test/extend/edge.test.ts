import { describe, expect, it } from 'vitest';
import { createEdgeTransforms, type ExtendChunk } from '../../src/extend/edge';
import { createTransforms, type Checked } from '../../src/extend/transforms';
import { pluginRunner } from '../../src/extend/plugins';
import type { SourceMiddleware } from '../../src/extend/types';
import type { Message } from '../../src/message/types';
import type { AnalyticsError } from '../../src/message/errors';

// The middleware stage's stand-in in the CDN bundle (CONTRACT section 1, core and edges): the chunk it loads is the
// real stage (transforms.ts), given here by a loader the test controls.

const message = (id: string): Message =>
  ({
    type: 'track',
    event: 'Clicked',
    properties: {},
    messageId: id,
    timestamp: '2026-01-01T00:00:00.000Z',
    anonymousId: 'anon',
    integrations: {},
    context: { library: { name: 'svc-analytics', version: '0' } },
  }) as Message;
const CHUNK: ExtendChunk = { transforms: createTransforms, plugins: pluginRunner };
const tag = (name: string): SourceMiddleware => ({ payload, next }) => ((payload.obj.properties![name] = true), next(payload));
const tags = async (out: Checked | Promise<Checked>) => {
  const c = await out;
  return c instanceof Error ? c.code : Object.keys(c.message.properties!);
};

/** A stage whose chunk loads (or fails) when the test says. */
function setup() {
  const reported: AnalyticsError[] = [];
  const loads: { resolve(c: ExtendChunk): void; reject(e: unknown): void }[] = [];
  const t = createEdgeTransforms({ integrations: {}, timeout: 1000 }, (e) => reported.push(e), () => new Promise((resolve, reject) => loads.push({ resolve, reject })));
  return { t, reported, loads };
}

describe('the middleware stage as an edge (src/extend/edge.ts)', () => {
  it('is inactive and loads nothing until a middleware or plugin is added', () => {
    const { t, loads } = setup();
    expect(t.active()).toBe(false);
    t.after(message('a'));
    expect(loads).toHaveLength(0);
    t.use(1 as unknown as SourceMiddleware);
    expect(loads).toHaveLength(0);
    t.use(tag('m1'));
    expect(t.active()).toBe(true);
    expect(loads).toHaveLength(1);
  });

  it('runs each waiting message through the middleware added before it, in call order, once the chunk is here', async () => {
    const { t, loads } = setup();
    t.use(tag('m1'));
    const b = t.run(message('b'));
    t.use(tag('m2'));
    const c = t.run(message('c'));
    expect(loads).toHaveLength(1); // one fetch for all of them
    loads[0].resolve(CHUNK);
    expect(await tags(b)).toEqual(['m1']);
    expect(await tags(c)).toEqual(['m1', 'm2']);
    // and at once from then on
    t.use(tag('m3'));
    const d = t.run(message('d'));
    expect(d instanceof Promise).toBe(false);
    expect(await tags(d)).toEqual(['m1', 'm2', 'm3']);
  });

  it('a chunk that cannot load: reported, what waits stays held (never let through without its middleware), fetched again on the next need', async () => {
    const { t, loads, reported } = setup();
    t.use(tag('m1'));
    let settled = false;
    const b = t.run(message('b'));
    void Promise.resolve(b).then(() => (settled = true));
    loads[0].reject('the script failed to load');
    await new Promise((r) => setTimeout(r, 0));
    expect(reported.map((e) => e.code)).toEqual(['middleware_error']);
    expect(settled).toBe(false);
    expect(t.active()).toBe(true);
    const c = t.run(message('c'));
    expect(loads).toHaveLength(2);
    loads[1].resolve(CHUNK);
    expect(await tags(b)).toEqual(['m1']);
    expect(await tags(c)).toEqual(['m1']);
  });

  it('register() resolves once the chunk is here and the plugin loaded; its hooks run on the messages after it', async () => {
    const { t, loads } = setup();
    const registered = t.register([{ name: 'p', type: 'enrichment', version: '1', isLoaded: () => true, load: () => Promise.resolve(), track: (ctx: any) => (ctx.updateEvent('properties.p', true), ctx) }], {});
    const b = t.run(message('b'));
    loads[0].resolve(CHUNK);
    await registered;
    expect(await tags(b)).toEqual(['p']);
  });
});
