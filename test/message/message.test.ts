import { afterEach, describe, expect, it } from 'vitest';
import { buildMessage, identifyTraits, type BuiltMessage, type MessageParts, type Visitor } from '../../src/message/message';
import { checkMessage } from '../../src/message/check';
import { normalise, type NormalisedCall } from '../../src/message/call';
import { buildContext, freeze, pageContext, type Environment } from '../../src/message/context';
import { MESSAGE_LIMIT } from '../../src/message/validate';
import type { Message, MessageType } from '../../src/message/types';
import type { AnalyticsError } from '../../src/message/errors';
import { patched } from '../patched';

const ENV: Environment = {
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  locale: 'en-GB',
  timezone: 'Europe/Paris',
  screen: { width: 1920, height: 1080, density: 2 },
};
const PAGE = pageContext('https://shop.example/docs/a?utm_campaign=spring&x=1', 'Docs', 'https://ref.example/');
const CONTEXT = buildContext({ env: ENV, page: PAGE });
// What the shared fixtures look like; every test leaves them so (checked after each).
const FIXTURES = JSON.stringify({ ENV, PAGE, CONTEXT });
const TIME = Date.UTC(2026, 0, 2, 3, 4, 5, 6);
const ISO = '2026-01-02T03:04:05.006Z';
const ID = '01JGQ0000000000000000000AB';
const ANON: Visitor = { anonymousId: 'anon-1', userId: null, traits: {} };
const KNOWN: Visitor = { anonymousId: 'anon-1', userId: 'user-1', traits: { plan: 'pro', email: 'old@example.com' } };
const VISITORS = JSON.stringify({ ANON, KNOWN });

// The fields every message carries, for the fixtures above and an anonymous visitor.
const COMMON = { messageId: ID, timestamp: ISO, anonymousId: 'anon-1', integrations: {}, context: CONTEXT };

/** The parts of a call `type(...args)` made at TIME on PAGE by ANON (unless `more` says otherwise). */
function parts(type: MessageType, args: unknown[], more: Partial<MessageParts> = {}): MessageParts {
  return { type, call: normalise(type, args), visitor: ANON, page: PAGE, context: CONTEXT, integrations: {}, messageId: ID, time: TIME, ...more };
}

function built(type: MessageType, args: unknown[], more?: Partial<MessageParts>): BuiltMessage {
  const r = buildMessage(parts(type, args, more));
  if (r instanceof Error) throw r;
  return r;
}

const build = (type: MessageType, args: unknown[], more?: Partial<MessageParts>): Message => built(type, args, more).message;

/** The error buildMessage returns (never throws) for these parts. */
function refusal(p: MessageParts): AnalyticsError {
  let r: ReturnType<typeof buildMessage> | undefined;
  expect(() => (r = buildMessage(p))).not.toThrow();
  expect(r).toBeInstanceOf(Error);
  return r as AnalyticsError;
}

const refused = (type: MessageType, args: unknown[], more?: Partial<MessageParts>) => refusal(parts(type, args, more));

const utf8 = (s: string) => new TextEncoder().encode(s).length;

// An object with an own `__proto__` key, as JSON.parse makes from a hostile payload.
const hostile = () => JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');

function expectNoProto(o: any) {
  expect(Object.getPrototypeOf(o)).toBe(Object.prototype);
  expect(Object.getOwnPropertyDescriptor(o, '__proto__')).toBeUndefined();
  expect(o.polluted).toBeUndefined();
  expect(o.a).toBe(1);
}

afterEach(() => {
  const polluted = ({} as any).polluted;
  delete (Object.prototype as any).polluted;
  expect(polluted).toBeUndefined();
  expect(JSON.stringify({ ENV, PAGE, CONTEXT })).toBe(FIXTURES);
  expect(JSON.stringify({ ANON, KNOWN })).toBe(VISITORS);
});

describe('buildMessage', () => {
  describe('wire fields of each call type (CONTRACT section 2)', () => {
    it('builds a track message with event and properties, and the common fields', () => {
      expect(build('track', ['Signed Up', { plan: 'pro' }])).toStrictEqual({ type: 'track', event: 'Signed Up', properties: { plan: 'pro' }, ...COMMON });
    });

    it('gives a track without properties an empty properties object', () => {
      expect(build('track', ['Signed Up']).properties).toStrictEqual({});
    });

    it("carries the visitor's userId on track, page, screen and group once known, and none before", () => {
      const calls: [MessageType, unknown[]][] = [
        ['track', ['x']],
        ['page', []],
        ['screen', ['Home']],
        ['group', ['g-1']],
      ];
      for (const [type, args] of calls) {
        expect(build(type, args, { visitor: KNOWN }).userId, type).toBe('user-1');
        expect('userId' in build(type, args), type).toBe(false);
      }
    });

    it('builds a page message with name, category, and properties holding path, referrer, search, title and url', () => {
      expect(build('page', ['Docs', 'Intro', { section: 2 }])).toStrictEqual({
        type: 'page',
        category: 'Docs',
        name: 'Intro',
        properties: { path: '/docs/a', referrer: 'https://ref.example/', search: '?utm_campaign=spring&x=1', title: 'Docs', url: 'https://shop.example/docs/a?utm_campaign=spring&x=1', name: 'Intro', category: 'Docs', section: 2 },
        ...COMMON,
      });
    });

    it('reads page(name), page(properties) and page() the analytics.js way', () => {
      const named = build('page', ['Home']);
      expect(named.name).toBe('Home');
      expect('category' in named).toBe(false);
      expect(named.properties).toStrictEqual({ ...PAGE, name: 'Home' });

      const props = build('page', [{ a: 1 }]);
      expect('name' in props).toBe(false);
      expect(props.properties).toStrictEqual({ ...PAGE, a: 1 });

      const bare = build('page', []);
      expect('name' in bare || 'category' in bare).toBe(false);
      expect(bare.properties).toStrictEqual({ ...PAGE });
      expect(bare.context).toStrictEqual(CONTEXT);
    });

    it("lets the caller's page properties win over the page facts, and their string values replace context.page's", () => {
      const m = build('page', ['Docs', { title: 'Mine', url: 'https://shop.example/mine?q=1', path: '/mine', extra: true }]);
      expect(m.properties).toStrictEqual({ ...PAGE, name: 'Docs', title: 'Mine', url: 'https://shop.example/mine?q=1', path: '/mine', extra: true });
      expect(m.context.page).toStrictEqual({ ...PAGE, title: 'Mine', url: 'https://shop.example/mine?q=1', path: '/mine' });
      expect(m.context).toStrictEqual({ ...CONTEXT, page: m.context.page });

      const all = { path: '/p', referrer: 'https://r.example/', search: '?s=1', title: 'T', url: 'https://u.example/p?s=1' };
      const n = build('page', [{ ...all }]);
      expect(n.properties).toStrictEqual(all);
      expect(n.context.page).toStrictEqual(all);
    });

    it("lets the caller's options.context.page win over page() properties (the caller's context wins over all)", () => {
      const m = build('page', ['Docs', { title: 'From properties', path: '/props' }, { context: { page: { title: 'From context' } } }]);
      expect(m.context.page.title).toBe('From context');
      expect(m.context.page.path).toBe('/props');
      expect(m.properties!.title).toBe('From properties');
    });

    it('shares the automatic context (which the caller freezes) unless the call brings a context or page facts of its own', () => {
      const a = build('track', ['A', {}]);
      const b = build('track', ['B', {}]);
      expect(a.context).toBe(CONTEXT);
      expect(b.context).toBe(CONTEXT);
      const own = build('track', ['C', {}, { context: { ip: '1.2.3.4' } }]);
      expect(own.context).not.toBe(CONTEXT);
      expect(own.context).toEqual({ ...CONTEXT, ip: '1.2.3.4' });
    });

    it("keeps context.page's value where the caller's page property is not a string", () => {
      const m = build('page', [{ title: 42, url: null, path: { p: 1 } }]);
      expect(m.properties).toStrictEqual({ ...PAGE, title: 42, url: null, path: { p: 1 } });
      expect(m.context.page).toStrictEqual(PAGE);
    });

    it("does not add the caller's page property values to context.page on other call types", () => {
      const m = build('track', ['x', { title: 'Mine', url: 'https://other.example/' }]);
      expect(m.context.page).toStrictEqual(PAGE);
      expect(m.properties).toStrictEqual({ title: 'Mine', url: 'https://other.example/' });
    });

    it('builds a screen message with its name in the properties (and no page facts)', () => {
      expect(build('screen', ['Home', { tab: 'x' }])).toStrictEqual({ type: 'screen', name: 'Home', properties: { name: 'Home', tab: 'x' }, ...COMMON });
      const m = build('screen', ['Settings', 'Privacy']);
      expect(m).toMatchObject({ name: 'Privacy', category: 'Settings', properties: { name: 'Privacy' } });
      expect(m.properties).toStrictEqual({ name: 'Privacy' });
      expect(build('screen', []).properties).toStrictEqual({});
    });

    it('builds an identify message with userId and traits', () => {
      expect(build('identify', ['user-1', { email: 'a@example.com' }])).toStrictEqual({
        type: 'identify',
        userId: 'user-1',
        traits: { email: 'a@example.com' },
        ...COMMON,
      });
    });

    it('merges the traits over the stored ones for the same user, or when no user id is given (userId from the visitor)', () => {
      expect(build('identify', ['user-1', { email: 'new@example.com' }], { visitor: KNOWN })).toMatchObject({
        userId: 'user-1',
        traits: { plan: 'pro', email: 'new@example.com' },
      });
      const m = build('identify', [{ email: 'new@example.com' }], { visitor: KNOWN });
      expect(m.userId).toBe('user-1');
      expect(m.traits).toStrictEqual({ plan: 'pro', email: 'new@example.com' });
    });

    it("keeps an anonymous visitor's traits when they identify", () => {
      const visitor: Visitor = { anonymousId: 'anon-1', userId: null, traits: { referral: 'ad' } };
      expect(build('identify', ['user-1', { email: 'a@example.com' }], { visitor }).traits).toStrictEqual({ referral: 'ad', email: 'a@example.com' });
    });

    it('replaces the stored traits for another user', () => {
      const m = build('identify', ['user-2', { email: 'b@example.com' }], { visitor: KNOWN });
      expect(m.userId).toBe('user-2');
      expect(m.traits).toStrictEqual({ email: 'b@example.com' });
    });

    it('builds a group message with groupId, traits and objectTypeId (not the visitor traits)', () => {
      expect(build('group', ['g-1', { name: 'Acme' }, { objectTypeId: '2' }], { visitor: KNOWN })).toStrictEqual({
        type: 'group',
        groupId: 'g-1',
        traits: { name: 'Acme' },
        objectTypeId: '2',
        userId: 'user-1',
        ...COMMON,
      });
      const plain = build('group', ['g-1']);
      expect('objectTypeId' in plain).toBe(false);
      expect(plain.traits).toStrictEqual({});
    });

    it('takes a parameter fragment off the url and referrer a page() caller gives, in properties and context.page (CONTRACT section 4)', () => {
      const url = 'https://shop.example/cb?x=1#access_token=abc&state=1';
      const referrer = 'https://idp.example/x#id_token=zzz&a=1';
      const m = build('page', [{ url, referrer, other: url }]);
      expect(m.properties).toMatchObject({ url: 'https://shop.example/cb?x=1', referrer: 'https://idp.example/x', other: url });
      expect(m.context.page).toMatchObject({ url: 'https://shop.example/cb?x=1', referrer: 'https://idp.example/x' });
      const viaContext = build('page', [{}, { context: { page: { url, referrer } } }]);
      expect(viaContext.context.page).toMatchObject({ url: 'https://shop.example/cb?x=1', referrer: 'https://idp.example/x' });
      // a route fragment stays
      expect(build('page', [{ url: 'https://shop.example/#/cart/42' }]).properties!.url).toBe('https://shop.example/#/cart/42');
      // the shared automatic context is never changed
      expect(CONTEXT).toEqual(JSON.parse(FIXTURES).CONTEXT);
    });

    it('builds group(traits) for the stored group, as analytics.js, merging the traits; refused when there is none', () => {
      const visitor = { ...KNOWN, groupId: 'g-1', groupTraits: { name: 'Acme', size: 1 } };
      for (const args of [[{ size: 2 }], [null, { size: 2 }], ['', { size: 2 }]])
        expect(build('group', args, { visitor })).toMatchObject({ type: 'group', groupId: 'g-1', traits: { name: 'Acme', size: 2 } });
      for (const args of [[], [{ size: 2 }], [null, { size: 2 }], ['']]) {
        const e = refused('group', args, { visitor: KNOWN });
        expect(e.code).toBe('invalid_arguments');
        expect(e.message).toMatch(/groupId/);
      }
    });

    it("builds an alias message whose previousId defaults to the visitor's user id, else the anonymous id", () => {
      expect(build('alias', ['user-2'], { visitor: KNOWN })).toStrictEqual({ type: 'alias', userId: 'user-2', previousId: 'user-1', ...COMMON });
      expect(build('alias', ['user-2'])).toStrictEqual({ type: 'alias', userId: 'user-2', previousId: 'anon-1', ...COMMON });
      expect(build('alias', ['user-2', 'prev-9'], { visitor: KNOWN })).toStrictEqual({ type: 'alias', userId: 'user-2', previousId: 'prev-9', ...COMMON });
    });

    it("never puts the visitor's user id on an alias message as its userId", () => {
      const m = build('alias', ['user-2'], { visitor: KNOWN });
      expect(m.userId).toBe('user-2');
      expect(Object.keys(m).sort()).toEqual(['anonymousId', 'context', 'integrations', 'messageId', 'previousId', 'timestamp', 'type', 'userId']);
      expect(JSON.stringify(m).match(/"userId"/g)).toHaveLength(1);
    });
  });

  describe('timestamp', () => {
    it('is the time of the call as ISO 8601', () => {
      expect(build('track', ['x']).timestamp).toBe(ISO);
      expect(build('track', ['x'], { time: 0 }).timestamp).toBe('1970-01-01T00:00:00.000Z');
    });

    it('takes options.timestamp, a Date or an ISO string, over the call time, on every call type', () => {
      const when = '2024-05-06T07:08:09.010Z';
      const calls: [MessageType, unknown[]][] = [
        ['track', ['x', {}]],
        ['page', [{}]],
        ['screen', ['Home', {}]],
        ['identify', ['user-1', {}]],
        ['group', ['g-1', {}]],
        ['alias', ['user-2', 'prev-1']],
      ];
      for (const [type, args] of calls) {
        for (const timestamp of [new Date(when), when]) expect(build(type, [...args, { timestamp }]).timestamp, type).toBe(when);
        expect(build(type, [...args, { timestamp: '2024-05-06T09:08:09+02:00' }]).timestamp, type).toBe('2024-05-06T07:08:09.000Z');
      }
    });

    it('accepts the years 0000 to 9999', () => {
      expect(build('track', ['x', {}, { timestamp: '0000-01-01T00:00:00.000Z' }]).timestamp).toBe('0000-01-01T00:00:00.000Z');
      expect(build('track', ['x', {}, { timestamp: new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)) }]).timestamp).toBe('9999-12-31T23:59:59.999Z');
    });

    it('refuses an invalid options.timestamp with invalid_arguments (returned, not thrown)', () => {
      for (const timestamp of ['nope', '', '2024-13-45T00:00:00Z', new Date(NaN), {}]) {
        const e = refused('track', ['x', {}, { timestamp }]);
        expect(e.code, String(timestamp)).toBe('invalid_arguments');
        expect(e.message).toContain('timestamp');
      }
    });

    it('refuses an options.timestamp that cannot even be read as a date with invalid_arguments (returned, not thrown)', () => {
      for (const timestamp of [Object.create(null), Symbol('t'), { valueOf: () => { throw new Error('no'); } }])
        expect(refused('track', ['x', {}, { timestamp }]).code, String(typeof timestamp)).toBe('invalid_arguments');
    });

    it('refuses an options.timestamp whose year is outside 0000-9999 with invalid_arguments', () => {
      for (const timestamp of [new Date(Date.UTC(10000, 0, 1)), '+010000-01-01T00:00:00.000Z', '-000001-12-31T23:59:59.999Z', new Date(8.64e15), new Date(-8.64e15)])
        expect(refused('track', ['x', {}, { timestamp }]).code, String(timestamp)).toBe('invalid_arguments');
    });
  });

  describe('options', () => {
    it("uses options.anonymousId over the visitor's, for that call only", () => {
      const m = build('track', ['x', {}, { anonymousId: 'anon-call' }], { visitor: KNOWN });
      expect(m.anonymousId).toBe('anon-call');
      expect(m.userId).toBe('user-1');
      expect(build('track', ['x', {}, { anonymousId: 42 }]).anonymousId).toBe('42');
      expect(build('alias', ['user-2', { anonymousId: 'anon-call' }]).anonymousId).toBe('anon-call');
      expect(build('track', ['x'], { visitor: KNOWN }).anonymousId).toBe('anon-1');
    });

    it("merges the call's integrations over the load defaults, into a new object (without the call's, the defaults as given)", () => {
      const defaults = { All: true, 'Google Analytics': false };
      const m = build('track', ['x', {}, { integrations: { 'Google Analytics': true, Mixpanel: false } }], { integrations: defaults });
      expect(m.integrations).toStrictEqual({ All: true, 'Google Analytics': true, Mixpanel: false });
      expect(defaults).toStrictEqual({ All: true, 'Google Analytics': false });
      const plain = build('track', ['x'], { integrations: defaults });
      expect(plain.integrations).toStrictEqual(defaults);
      expect(m.integrations).not.toBe(defaults);
    });

    it('refuses integrations values that are not booleans with invalid_payload naming the key (spec 000 section 2.3)', () => {
      for (const v of [1, 0, 'true', null, {}, [], [true]]) {
        const e = refused('track', ['x', {}, { integrations: { All: true, Mixpanel: v } }]);
        expect(e.code, JSON.stringify(v)).toBe('invalid_payload');
        expect(e.message).toContain('integrations.Mixpanel');
      }
      const e = refused('track', ['x'], { integrations: { Bad: 'yes' } });
      expect(e.code).toBe('invalid_payload');
      expect(e.message).toContain('integrations.Bad');
    });

    it("deep-merges options.context over the automatic context, the caller's values winning", () => {
      const context = { app: { name: 'shop' }, page: { title: 'Override' }, screen: { width: 1 }, locale: 'fr-FR', library: { version: '9.9.9' }, campaign: { source: 'mail' } };
      const m = build('track', ['x', {}, { context }]);
      expect(m.context).toStrictEqual({
        ...CONTEXT,
        app: { name: 'shop' },
        page: { ...PAGE, title: 'Override' },
        screen: { width: 1, height: 1080, density: 2 },
        locale: 'fr-FR',
        library: { name: CONTEXT.library.name, version: '9.9.9' },
        campaign: { name: 'spring', source: 'mail' },
      });
    });

    it('replaces, rather than merges, where the caller gives a non-object value', () => {
      const m = build('track', ['x', {}, { context: { screen: null, page: 'p', os: [1] } }]);
      expect(m.context).toMatchObject({ screen: null, page: 'p', os: [1] });
    });

    it('refuses an options.context that is not an object after sanitising with invalid_payload', () => {
      for (const context of [new Date(0), { toJSON: () => 'text' }, { toJSON: () => [1] }]) {
        const e = refused('track', ['x', {}, { context }]);
        expect(e.code).toBe('invalid_payload');
        expect(e.message).toContain('context');
      }
      // past normalise (which refuses these itself), buildMessage does not take them either
      for (const context of ['text', 5, true, [], [{ a: 1 }]]) {
        const call: NormalisedCall = { fields: { event: 'x', properties: {} }, options: { context } as any };
        expect(refusal({ ...parts('track', ['x']), call }).code, JSON.stringify(context)).toBe('invalid_payload');
      }
    });

    it('treats a null or undefined options.context (which normalise lets through) as none', () => {
      for (const context of [null, undefined]) {
        const r = buildMessage(parts('track', ['x', {}, { context }]));
        expect(r, String(context)).not.toBeInstanceOf(Error);
        if (!(r instanceof Error)) expect(r.message.context).toStrictEqual(CONTEXT);
      }
    });
  });

  describe('copying the caller data', () => {
    it('leaves __proto__ keys out of properties, traits and context, never polluting Object.prototype', () => {
      expectNoProto(build('track', ['x', hostile()]).properties);
      expectNoProto(build('page', [hostile()]).properties);
      expectNoProto(build('screen', ['Home', hostile()]).properties);
      expectNoProto(build('identify', ['user-1', hostile()], { visitor: KNOWN }).traits);
      expectNoProto(build('identify', ['user-2', hostile()], { visitor: KNOWN }).traits);
      expectNoProto(build('group', ['g-1', hostile()]).traits);
      const m = build('track', ['x', { nested: hostile() }, { context: { ...hostile(), page: hostile() } }]);
      expectNoProto(m.properties!.nested);
      expect(Object.getPrototypeOf(m.context)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(m.context, '__proto__')).toBeUndefined();
      expect(m.context.polluted).toBeUndefined();
      expectNoProto(m.context.page);
      expect(m.context.page).toMatchObject(PAGE);
      expect(JSON.stringify(m)).not.toContain('__proto__');
      expect(({} as any).polluted).toBeUndefined();
      // nor after a source middleware or plugin
      const checked = checkMessage(m, { ...m, properties: hostile(), context: { ...m.context, nested: hostile() } });
      expect(JSON.stringify(checked)).not.toContain('__proto__');
    });

    it("takes a snapshot: changing the caller's properties, or arrays and objects inside them, after the call changes nothing", () => {
      const props: any = { list: [1, { a: 1 }], nested: { x: 1, deep: { y: [2] } }, s: 'v' };
      const context: any = { app: { name: 'shop', tags: ['a'] } };
      const m = build('track', ['x', props, { context }]);
      const before = JSON.stringify(m);
      props.list.push(2);
      props.list[1].a = 2;
      props.nested.x = 2;
      props.nested.deep.y.push(3);
      props.s = 'changed';
      props.added = true;
      context.app.name = 'changed';
      context.app.tags.push('b');
      context.extra = 1;
      expect(JSON.stringify(m)).toBe(before);
      expect(m.properties).toStrictEqual({ list: [1, { a: 1 }], nested: { x: 1, deep: { y: [2] } }, s: 'v' });
      expect(m.context.app).toStrictEqual({ name: 'shop', tags: ['a'] });

      const traits: any = { address: { city: 'Paris' } };
      const id = build('identify', ['user-1', traits]);
      traits.address.city = 'Lyon';
      expect(id.traits).toStrictEqual({ address: { city: 'Paris' } });
    });

    it('turns Dates into ISO strings and BigInts into strings, drops functions, and replaces cycles with "[Circular]"', () => {
      const props: any = { d: new Date(Date.UTC(2024, 4, 6)), n: 12345678901234567890n, f: () => 1, list: [() => 1, 2n], k: 1 };
      props.self = props;
      props.list.push(props);
      const m = build('track', ['x', props]);
      expect(m.properties).toStrictEqual({ d: '2024-05-06T00:00:00.000Z', n: '12345678901234567890', list: [null, '2', '[Circular]'], k: 1, self: '[Circular]' });
      expect(JSON.parse(JSON.stringify(m))).toStrictEqual(m);
    });

    it('does not change the automatic context it is given, whatever the call type and options', () => {
      const context = buildContext({ env: ENV, page: PAGE });
      const before = JSON.stringify(context);
      const pageBefore = JSON.stringify(PAGE);
      const opts = { context: { page: { title: 'Override' }, screen: { width: 1 }, network: { wifi: false }, device: { model: 'X' } } };
      const calls: [MessageType, unknown[]][] = [
        ['track', ['x', { title: 'T' }, opts]],
        ['page', ['Cat', 'Name', { url: 'https://other.example/x', title: 'T', path: '/x' }, opts]],
        ['page', [{ url: 'https://other.example/y' }]],
        ['screen', ['Home', {}, opts]],
        ['identify', ['user-2', { a: 1 }, opts]],
        ['group', ['g-1', {}, opts]],
        ['alias', ['user-2', opts]],
      ];
      for (const [type, args] of calls) {
        const m = build(type, args, { context, visitor: KNOWN });
        expect(m.context, type).not.toBe(context);
        expect(JSON.stringify(context), type).toBe(before);
        expect(JSON.stringify(PAGE), type).toBe(pageBefore);
      }
    });

    it('never changes the automatic context it is given (it is shared: the caller freezes it)', () => {
      const context = freeze(buildContext({ env: ENV, page: PAGE }));
      const before = JSON.stringify(context);
      buildMessage(parts('page', ['Docs', { title: 'Mine' }], { context }));
      buildMessage(parts('track', ['x', {}, { context: { page: { title: 'T' }, extra: 1 } }], { context }));
      expect(JSON.stringify(context)).toBe(before);
    });

    it('gives equal messages for equal parts (pure), and leaves the parts unchanged', () => {
      const calls: [MessageType, unknown[]][] = [
        ['track', ['x', { a: [1, { b: 2 }] }, { integrations: { A: true }, context: { app: { name: 'shop' } } }]],
        ['page', ['Cat', 'Name', { title: 'T' }]],
        ['screen', ['Home']],
        ['identify', ['user-1', { email: 'e' }]],
        ['group', ['g-1', { n: 1 }, { objectTypeId: '3' }]],
        ['alias', ['user-2']],
      ];
      for (const [type, args] of calls) {
        const p = parts(type, args, { visitor: KNOWN, integrations: { All: true } });
        const before = JSON.stringify(p);
        const a = buildMessage(p);
        const b = buildMessage(p);
        const c = buildMessage(parts(type, args, { visitor: KNOWN, integrations: { All: true } }));
        expect(a, type).not.toBeInstanceOf(Error);
        expect(b, type).toStrictEqual(a);
        expect(c, type).toStrictEqual(a);
        expect(JSON.stringify(p), type).toBe(before);
      }
    });
  });

  describe('size', () => {
    it('reports bytes as the UTF-8 length of the serialised message', () => {
      const props = { latin: 'café', euro: '€€', cjk: '日本語', emoji: '😀👩‍👩‍👧', lone: 'a\ud800b\udc00', quote: '"\\\n\u0001', '键': 'é' };
      const calls: [MessageType, unknown[]][] = [
        ['track', ['Ordered 😀', props]],
        ['page', ['Catégorie', 'Nom', props]],
        ['identify', ['用户', props]],
        ['group', ['g-€', props]],
        ['alias', ['ü', 'ö']],
      ];
      for (const [type, args] of calls) {
        const { message, bytes } = built(type, args, { visitor: KNOWN });
        const text = JSON.stringify(message);
        expect(bytes, type).toBe(utf8(text));
        expect(bytes, type).toBeGreaterThan(text.length);
      }
    });

    it('has a limit of 32,000 bytes', () => {
      expect(MESSAGE_LIMIT).toBe(32000);
    });

    it('accepts a message of exactly 32,000 bytes and refuses one of 32,001 with message_too_large and its messageId', () => {
      const overhead = built('track', ['x', { pad: '' }]).bytes;
      expect(overhead).toBeLessThan(1000);
      const at = built('track', ['x', { pad: 'a'.repeat(32000 - overhead) }]);
      expect(at.bytes).toBe(32000);
      expect(utf8(JSON.stringify(at.message))).toBe(32000);
      const e = refused('track', ['x', { pad: 'a'.repeat(32001 - overhead) }]);
      expect(e.code).toBe('message_too_large');
      expect(e.messageIds).toEqual([ID]);
    });

    it('accepts exactly 32,000 bytes made of multi-byte characters too', () => {
      const overhead = built('track', ['x', { pad: '' }]).bytes;
      const rest = 32000 - overhead;
      const pad = '€'.repeat(Math.floor(rest / 3)) + 'a'.repeat(rest % 3);
      expect(built('track', ['x', { pad }]).bytes).toBe(32000);
      expect(refused('track', ['x', { pad: pad + 'a' }]).code).toBe('message_too_large');
    });

    it('measures bytes, not characters: a "€" pad under 32,000 characters but over 32,000 bytes is refused', () => {
      const overhead = built('track', ['x', { pad: '' }]);
      const pad = '€'.repeat(10700); // 32,100 bytes
      expect(JSON.stringify(overhead.message).length + pad.length).toBeLessThan(32000);
      const e = refused('track', ['x', { pad }]);
      expect(e.code).toBe('message_too_large');
      expect(e.messageIds).toEqual([ID]);
    });

    it('refuses at once, with message_too_large and its messageId, data that references one object on many levels', () => {
      let o: any = { leaf: 1 };
      for (let i = 0; i < 21; i++) o = { a: o, b: o };
      const t = performance.now();
      for (const [where, args] of [['properties', ['x', { o }]], ['context', ['x', {}, { context: { o } }]], ['integrations', ['x', {}, { integrations: { o } }]]] as const) {
        const e = refused('track', [...args]);
        expect(e.code, where).toBe('message_too_large');
        expect(e.messageIds).toEqual([ID]);
      }
      expect(performance.now() - t).toBeLessThan(1500);
    });

    it('counts the whole message: a large context or stored traits count too', () => {
      expect(refused('track', ['x', {}, { context: { big: 'a'.repeat(32000) } }]).code).toBe('message_too_large');
      const visitor: Visitor = { anonymousId: 'anon-1', userId: 'user-1', traits: { big: 'a'.repeat(32000) } };
      expect(refused('identify', ['user-1', { small: 1 }], { visitor }).code).toBe('message_too_large');
      expect(built('identify', ['user-2', { small: 1 }], { visitor }).bytes).toBeLessThan(32000); // another user: traits replaced
    });
  });

  describe('size, with the context measured once (contextBytes)', () => {
    const contextBytes = utf8(JSON.stringify(CONTEXT));
    const cases: [MessageType, unknown[]][] = [
      ['track', ['Bought', { price: 9.5, name: 'café ☕', tags: ['a', '😀'] }]],
      ['page', ['Docs', { title: 'Mine' }]],
      ['identify', ['user-2', { email: 'a@b.example' }]],
      ['alias', ['user-3']],
      ['track', ['With context', {}, { context: { ip: '1.2.3.4' } }]],
    ];
    for (const [type, args] of cases)
      it(`gives the same bytes as measuring the whole message: ${type} ${JSON.stringify(args[0])}`, () => {
        const quick = built(type, args, { contextBytes });
        const whole = built(type, args);
        expect(quick.bytes).toBe(whole.bytes);
        expect(quick.bytes).toBe(utf8(JSON.stringify(quick.message)));
        expect(quick.message).toEqual(whole.message);
      });
  });

  describe('errors from the page', () => {
    const throwingGetter = () => ({
      ok: 1,
      get boom() {
        throw new Error('boom');
      },
    });
    const throwingToJSON = () => ({
      toJSON() {
        throw new Error('nope');
      },
    });

    it('returns invalid_payload, not throwing, when a getter in the properties, traits or options throws', () => {
      const cases: [MessageType, unknown[]][] = [
        ['track', ['x', throwingGetter()]],
        ['track', ['x', { nested: [throwingGetter()] }]],
        ['page', [throwingGetter()]],
        ['identify', ['user-1', throwingGetter()]],
        ['group', ['g-1', throwingGetter()]],
        ['track', ['x', {}, { context: throwingGetter() }]],
        ['track', ['x', {}, { integrations: throwingGetter() }]],
      ];
      for (const [type, args] of cases) {
        const e = refused(type, args);
        expect(e.code, type).toBe('invalid_payload');
        expect(e.message).toContain('boom');
      }
    });

    it('returns invalid_payload, not throwing, when a toJSON in the properties throws', () => {
      for (const args of [['x', { v: throwingToJSON() }], ['x', { list: [1, throwingToJSON()] }], ['x', {}, { context: { v: throwingToJSON() } }]]) {
        const e = refused('track', args);
        expect(e.code).toBe('invalid_payload');
        expect(e.message).toContain('nope');
      }
    });
  });

  describe("a page's patched built-ins", () => {
    it('builds the same message and bytes when the page replaced JSON.stringify and put toJSON on Array.prototype (arrays stay arrays)', () => {
      const args = ['Order', { list: [1, [2, 3], { a: [] }], s: 'é😀', d: new Date(0) }, { context: { app: { tags: ['t'] } } }];
      const expected = built('track', args);
      let r: ReturnType<typeof buildMessage> | undefined;
      patched(JSON, 'stringify', () => '', () =>
        patched(Array.prototype as any, 'toJSON', function (this: unknown[]) {
          return 'array of ' + this.length + 'x'.repeat(100000);
        }, () => (r = buildMessage(parts('track', args)))),
      );
      if (!r || r instanceof Error) throw r;
      expect(Array.isArray(r.message.properties!.list)).toBe(true);
      expect(r.message.properties).toStrictEqual({ list: [1, [2, 3], { a: [] }], s: 'é😀', d: '1970-01-01T00:00:00.000Z' });
      expect(r.message.context.app).toStrictEqual({ tags: ['t'] });
      expect(r).toStrictEqual(expected);
      expect(r.bytes).toBe(utf8(JSON.stringify(r.message)));
    });

    it('builds the same message and bytes when the page put toJSON on Object.prototype', () => {
      const args = ['Order', { list: [1, { b: 2 }], o: { c: 'é' } }];
      const expected = built('track', args);
      let r: ReturnType<typeof buildMessage> | undefined;
      patched(Object.prototype as any, 'toJSON', () => 'object', () => (r = buildMessage(parts('track', args))));
      if (!r || r instanceof Error) throw r;
      expect(r).toStrictEqual(expected);
      expect(r.bytes).toBe(utf8(JSON.stringify(r.message)));
    });

    it('still refuses an over-limit message when the page replaced JSON.stringify with one that writes less', () => {
      let r: ReturnType<typeof buildMessage> | undefined;
      patched(JSON, 'stringify', () => '{}', () => (r = buildMessage(parts('track', ['x', { pad: 'a'.repeat(33000) }]))));
      expect((r as AnalyticsError).code).toBe('message_too_large');
    });
  });
});

describe('identifyTraits', () => {
  it('merges the new traits over the stored ones for the same user', () => {
    expect(identifyTraits(KNOWN, 'user-1', { email: 'new@example.com', age: 3 })).toStrictEqual({ plan: 'pro', email: 'new@example.com', age: 3 });
  });

  it('merges when no user id is given', () => {
    expect(identifyTraits(KNOWN, undefined, { email: 'new@example.com' })).toStrictEqual({ plan: 'pro', email: 'new@example.com' });
    expect(identifyTraits(KNOWN, '', { email: 'new@example.com' })).toStrictEqual({ plan: 'pro', email: 'new@example.com' });
  });

  it('merges when the visitor had no user id yet (anonymous traits carry over)', () => {
    expect(identifyTraits({ anonymousId: 'a', userId: null, traits: { referral: 'ad' } }, 'user-1', { email: 'e' })).toStrictEqual({ referral: 'ad', email: 'e' });
  });

  it('replaces the stored traits for another user', () => {
    expect(identifyTraits(KNOWN, 'user-2', { email: 'b@example.com' })).toStrictEqual({ email: 'b@example.com' });
  });

  it("returns a new object and leaves the visitor's traits and the new traits unchanged", () => {
    const traits = { email: 'new@example.com' };
    const out = identifyTraits(KNOWN, 'user-1', traits);
    expect(out).not.toBe(KNOWN.traits);
    expect(out).not.toBe(traits);
    expect(traits).toStrictEqual({ email: 'new@example.com' });
    expect(KNOWN.traits).toStrictEqual({ plan: 'pro', email: 'old@example.com' });
  });
});

describe('checkMessage (what source middleware and plugins pass on)', () => {
  const original = () => (buildMessage(parts('track', ['Clicked', { a: 1 }])) as BuiltMessage).message;

  it('copies the message as plain JSON and measures it', () => {
    const m = original();
    const changed: any = { ...m, properties: { when: new Date('2026-01-02T03:04:05.000Z'), f: () => 1 } };
    const out = checkMessage(m, changed) as BuiltMessage;
    expect(out.message.properties).toEqual({ when: '2026-01-02T03:04:05.000Z' });
    expect(out.bytes).toBe(new TextEncoder().encode(JSON.stringify(out.message)).length);
    expect(out.message).not.toBe(changed);
  });

  it('keeps the original type and messageId', () => {
    const m = original();
    const out = checkMessage(m, { ...m, type: 'identify', messageId: 'mine' }) as BuiltMessage;
    expect(out.message.type).toBe('track');
    expect(out.message.messageId).toBe(m.messageId);
  });

  it('refuses what the API would refuse', () => {
    const m = original();
    const cases: [unknown, string][] = [
      [null, 'invalid_payload'],
      [{ ...m, event: '' }, 'invalid_payload'],
      [{ ...m, event: 5 }, 'invalid_payload'],
      [{ ...m, anonymousId: undefined, userId: undefined }, 'invalid_payload'],
      [{ ...m, properties: [1] }, 'invalid_payload'],
      [{ ...m, context: 'x' }, 'invalid_payload'],
      [{ ...m, integrations: { A: 'yes' } }, 'invalid_payload'],
      [{ ...m, timestamp: 'not a date' }, 'invalid_payload'],
      [{ ...m, properties: { big: 'x'.repeat(MESSAGE_LIMIT) } }, 'message_too_large'],
    ];
    for (const [changed, code] of cases) {
      const out = checkMessage(m, changed) as AnalyticsError;
      expect(out.code, JSON.stringify(changed)?.slice(0, 80)).toBe(code);
      expect(out.messageIds).toEqual([m.messageId]);
    }
  });

  it('keeps the original timestamp when a middleware removed it, and fills integrations and context', () => {
    const m = original();
    const { timestamp: _t, integrations: _i, context: _c, ...rest } = m;
    const out = checkMessage(m, rest) as BuiltMessage;
    expect(out.message.timestamp).toBe(m.timestamp);
    expect(out.message.integrations).toEqual({});
    expect(out.message.context).toEqual({});
  });
});
