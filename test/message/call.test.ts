import { describe, expect, it } from 'vitest';
import { normalise } from '../../src/message/call';
import type { AnalyticsError } from '../../src/message/errors';

const cb = () => {};

function refusal(fn: () => unknown): AnalyticsError {
  try {
    fn();
  } catch (e) {
    return e as AnalyticsError;
  }
  throw new Error('expected normalise to refuse the arguments');
}

describe('normalise', () => {
  describe('page', () => {
    it('reads page() as no name and empty properties', () => {
      const n = normalise('page', []);
      expect(n.fields).toEqual({ properties: {} });
      expect(n.options).toEqual({});
      expect(n.callback).toBeUndefined();
    });

    it("reads page('Docs') as a name", () => {
      expect(normalise('page', ['Docs']).fields).toEqual({ name: 'Docs', properties: {} });
    });

    it("reads page('Cat', 'Docs') as category then name", () => {
      expect(normalise('page', ['Cat', 'Docs']).fields).toEqual({ category: 'Cat', name: 'Docs', properties: {} });
    });

    it('reads page({title}) as properties', () => {
      const n = normalise('page', [{ title: 'T' }]);
      expect(n.fields).toEqual({ properties: { title: 'T' } });
      expect(n.fields.name).toBeUndefined();
    });

    it("reads page('Docs', {a: 1}) as a name and properties", () => {
      expect(normalise('page', ['Docs', { a: 1 }]).fields).toEqual({ name: 'Docs', properties: { a: 1 } });
    });

    it('reads page(null, name, properties, options, callback) with a null category placeholder', () => {
      const props = { a: 1 };
      const options = { timestamp: '2024-01-01T00:00:00.000Z' };
      const n = normalise('page', [null, 'Docs', props, options, cb]);
      expect(n.fields).toEqual({ name: 'Docs', properties: { a: 1 } });
      expect(n.fields).not.toHaveProperty('category');
      expect(n.options).toEqual(options);
      expect(n.callback).toBe(cb);
    });

    it("reads page('Docs', null, properties, options) as analytics.js does: the name, then properties and options", () => {
      const options = { context: { ip: '1.2.3.4' } };
      const n = normalise('page', ['Docs', null, { a: 1 }, options, cb]);
      expect(n.fields).toEqual({ name: 'Docs', properties: { a: 1 } });
      expect(n.options).toEqual(options);
      expect(n.callback).toBe(cb);
      expect(normalise('page', ['Docs', null, { a: 1 }]).fields).toEqual({ name: 'Docs', properties: { a: 1 } });
    });

    it("reads page('Docs', undefined, properties) as the name and those properties (an undefined stands for nothing)", () => {
      const n = normalise('page', ['Docs', undefined, { title: 'x' }]);
      expect(n.fields).toEqual({ name: 'Docs', properties: { title: 'x' } });
      expect(n.options).toEqual({});
    });

    it("reads screen('Home', null, {}, options) as the name and options", () => {
      const n = normalise('screen', ['Home', null, {}, { timestamp: '2024-01-01T00:00:00.000Z' }]);
      expect(n.fields).toEqual({ name: 'Home', properties: {} });
      expect(n.options).toEqual({ timestamp: '2024-01-01T00:00:00.000Z' });
    });

    it('keeps alias(userId, null, options): its second slot is previousId', () => {
      const n = normalise('alias', ['u1', null, { context: { a: 1 } }]);
      expect(n.fields).toEqual({ userId: 'u1' });
      expect(n.options).toEqual({ context: { a: 1 } });
    });

    it('reads page(category, name, properties, options)', () => {
      const n = normalise('page', ['Cat', 'Docs', { a: 1 }, { integrations: { x: false } }]);
      expect(n.fields).toEqual({ category: 'Cat', name: 'Docs', properties: { a: 1 } });
      expect(n.options).toEqual({ integrations: { x: false } });
    });
  });

  describe('screen', () => {
    it('reads screen(name, properties) like page', () => {
      expect(normalise('screen', ['Home', { a: 1 }]).fields).toEqual({ name: 'Home', properties: { a: 1 } });
    });
  });

  describe('track', () => {
    it("reads track('x') as an event with empty properties", () => {
      const n = normalise('track', ['x']);
      expect(n.fields).toEqual({ event: 'x', properties: {} });
      expect(n.options).toEqual({});
      expect(n.callback).toBeUndefined();
    });

    it("reads track('x', properties, callback) with the callback in the options slot", () => {
      const n = normalise('track', ['x', { a: 1 }, cb]);
      expect(n.fields).toEqual({ event: 'x', properties: { a: 1 } });
      expect(n.options).toEqual({});
      expect(n.callback).toBe(cb);
    });

    it("reads track('x', properties, options, callback)", () => {
      const options = { anonymousId: 'a1', context: { ip: '1.2.3.4' } };
      const n = normalise('track', ['x', { a: 1 }, options, cb]);
      expect(n.fields).toEqual({ event: 'x', properties: { a: 1 } });
      expect(n.options).toEqual(options);
      expect(n.callback).toBe(cb);
    });

    it('accepts null properties and options as absent', () => {
      const n = normalise('track', ['x', null, null, cb]);
      expect(n.fields).toEqual({ event: 'x', properties: {} });
      expect(n.options).toEqual({});
      expect(n.callback).toBe(cb);
    });

    it('refuses a call without an event name', () => {
      expect(refusal(() => normalise('track', [])).code).toBe('invalid_arguments');
      expect(refusal(() => normalise('track', [{ a: 1 }])).code).toBe('invalid_arguments');
      expect(refusal(() => normalise('track', [''])).code).toBe('invalid_arguments');
      expect(refusal(() => normalise('track', [null, { a: 1 }])).code).toBe('invalid_arguments');
    });

    it('refuses a whitespace-only event name', () => {
      const e = refusal(() => normalise('track', ['   \t']));
      expect(e).toBeInstanceOf(Error);
      expect(e.code).toBe('invalid_arguments');
    });

    it('refuses properties that are not an object', () => {
      expect(refusal(() => normalise('track', ['x', 'nope'])).code).toBe('invalid_arguments');
      expect(refusal(() => normalise('track', ['x', 5])).code).toBe('invalid_arguments');
      expect(refusal(() => normalise('track', ['x', [1, 2]])).code).toBe('invalid_arguments');
      expect(refusal(() => normalise('track', ['x', true])).code).toBe('invalid_arguments');
    });

    it('refuses options that are not an object', () => {
      expect(refusal(() => normalise('track', ['x', {}, 'nope'])).code).toBe('invalid_arguments');
      expect(refusal(() => normalise('track', ['x', {}, 7, cb])).code).toBe('invalid_arguments');
      expect(refusal(() => normalise('track', ['x', {}, [1]])).code).toBe('invalid_arguments');
    });

    it('refuses properties that are not an object on the wire (a Date, a toJSON giving a string)', () => {
      expect(refusal(() => normalise('track', ['x', new Date(0)])).code).toBe('invalid_arguments');
      expect(refusal(() => normalise('track', ['x', { toJSON: () => 'str' }])).code).toBe('invalid_arguments');
      expect(normalise('track', ['x', { toJSON: () => ({ a: 1 }) }]).fields.event).toBe('x');
    });

    it("accepts plain properties when a page put a toJSON on Object.prototype", () => {
      (Object.prototype as any).toJSON = () => 'page';
      try {
        expect(normalise('track', ['x', { a: 1 }]).fields).toEqual({ event: 'x', properties: { a: 1 } });
      } finally {
        delete (Object.prototype as any).toJSON;
      }
    });

    it('refuses options.integrations and options.context that are not objects', () => {
      for (const bad of ['All', 5, true, [], [1]]) {
        const e = refusal(() => normalise('track', ['x', {}, { integrations: bad }]));
        expect(e.code).toBe('invalid_arguments');
        expect(e.message).toContain('options.integrations');
        expect(refusal(() => normalise('track', ['x', {}, { context: bad }])).message).toContain('options.context');
      }
    });

    it('accepts null options.integrations and options.context as absent', () => {
      const options = { integrations: null, context: undefined };
      // (a copy of the caller's own options: see the next test)
      expect(normalise('track', ['x', {}, options]).options).toEqual(options);
    });

    it('reads only the options the caller gave: nothing a page put on Object.prototype', () => {
      const proto = Object.prototype as Record<string, unknown>;
      proto.timestamp = 'not a date';
      proto.integrations = { All: false };
      proto.anonymousId = 'polluted';
      try {
        for (const n of [normalise('track', ['x']), normalise('track', ['x', {}, { context: {} }]), normalise('alias', ['u', 'p', {}])]) {
          expect(n.options.timestamp).toBeUndefined();
          expect(n.options.integrations).toBeUndefined();
          expect(n.options.anonymousId).toBeUndefined();
        }
      } finally {
        delete proto.timestamp;
        delete proto.integrations;
        delete proto.anonymousId;
      }
    });

    it('refuses an options.anonymousId that is not a string or a number', () => {
      for (const bad of [{}, [], true]) {
        const e = refusal(() => normalise('track', ['x', {}, { anonymousId: bad }]));
        expect(e.code).toBe('invalid_arguments');
        expect(e.message).toContain('options.anonymousId');
      }
      expect(normalise('track', ['x', {}, { anonymousId: 42 }]).options).toEqual({ anonymousId: 42 });
    });

    it('refuses non-object page properties too', () => {
      expect(refusal(() => normalise('page', ['Cat', 'Docs', 'nope'])).code).toBe('invalid_arguments');
    });
  });

  describe('identify', () => {
    it("reads identify('u1', traits) as a user id and traits", () => {
      expect(normalise('identify', ['u1', { email: 'a@b.c' }]).fields).toEqual({ userId: 'u1', traits: { email: 'a@b.c' } });
    });

    it('reads identify(traits) as traits without a user id', () => {
      const n = normalise('identify', [{ email: 'a@b.c' }, cb]);
      expect(n.fields).toEqual({ traits: { email: 'a@b.c' } });
      expect(n.fields).not.toHaveProperty('userId');
      expect(n.callback).toBe(cb);
    });

    it('turns a numeric user id into a string', () => {
      expect(normalise('identify', [42]).fields).toEqual({ userId: '42', traits: {} });
    });

    it('refuses traits that are not an object', () => {
      expect(refusal(() => normalise('identify', ['u1', 'nope'])).code).toBe('invalid_arguments');
    });
  });

  describe('group', () => {
    it("reads group('g', traits, {objectTypeId}) and puts objectTypeId on the fields", () => {
      const n = normalise('group', ['g', { name: 'Acme' }, { objectTypeId: '2' }]);
      expect(n.fields).toEqual({ groupId: 'g', traits: { name: 'Acme' }, objectTypeId: '2' });
    });

    it('leaves objectTypeId out when it is not given', () => {
      expect(normalise('group', ['g']).fields).toEqual({ groupId: 'g', traits: {} });
    });

    it('refuses an objectTypeId that is not a string holding an integer', () => {
      expect(refusal(() => normalise('group', ['g', {}, { objectTypeId: 'company' }])).code).toBe('invalid_arguments');
      expect(refusal(() => normalise('group', ['g', {}, { objectTypeId: '2.5' }])).code).toBe('invalid_arguments');
      expect(refusal(() => normalise('group', ['g', {}, { objectTypeId: '' }])).code).toBe('invalid_arguments');
    });

    it('reads group(traits) and group(null, traits) without a groupId: the stored group is the message builder\'s to fill in', () => {
      expect(normalise('group', [{ name: 'Acme' }]).fields).toEqual({ groupId: undefined, traits: { name: 'Acme' } });
      expect(normalise('group', [null, { name: 'Acme' }]).fields).toEqual({ groupId: undefined, traits: { name: 'Acme' } });
    });
  });

  describe('alias', () => {
    it("reads alias('new') as a user id without previousId", () => {
      const n = normalise('alias', ['new']);
      expect(n.fields).toEqual({ userId: 'new' });
      expect(n.options).toEqual({});
    });

    it("reads alias('new', 'old', options) with the third argument as options", () => {
      const options = { integrations: { All: false } };
      const n = normalise('alias', ['new', 'old', options, cb]);
      expect(n.fields).toEqual({ userId: 'new', previousId: 'old' });
      expect(n.options).toEqual(options);
      expect(n.callback).toBe(cb);
    });

    it("validates the options in alias's object slot", () => {
      expect(refusal(() => normalise('alias', ['new', 'old', { integrations: 'All' }])).message).toContain('options.integrations');
      expect(refusal(() => normalise('alias', ['new', { context: 5 }])).message).toContain('options.context');
      expect(refusal(() => normalise('alias', ['new', 'old', { anonymousId: {} }])).message).toContain('options.anonymousId');
      const e = refusal(() => normalise('alias', ['new', 'old', 'third']));
      expect(e.code).toBe('invalid_arguments');
      expect(e.message).toContain('options');
      expect(refusal(() => normalise('alias', ['new', 'old', [1]])).code).toBe('invalid_arguments');
    });

    it('refuses a call without a user id', () => {
      expect(refusal(() => normalise('alias', [])).code).toBe('invalid_arguments');
      expect(refusal(() => normalise('alias', [{}])).code).toBe('invalid_arguments');
      expect(refusal(() => normalise('alias', [''])).code).toBe('invalid_arguments');
    });
  });
});
