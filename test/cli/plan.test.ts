// @vitest-environment node
// `svc-analytics plan check|infer|types` and the collector's --plan (CONTRACT section 7), spawned as a user runs them.
// Needs a build (dist/plan.mjs: the checker every place shares).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT, run, startCli, stopAll, freePort } from '../cli-helpers';
import { planTypes } from '../../bin/plan-types.mjs';
import { SPEC_EVENTS } from '../../dist/plan.mjs';

afterEach(stopAll);
const DEMO_PLAN = path.join(ROOT, 'demo', 'tracking-plan.json');
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'svc-plan-'));
const message = (event: string, properties: object, id = event) => ({ type: 'track', event, properties, messageId: id, timestamp: '2026-11-26T12:00:00.000Z', anonymousId: 'a' });
const logLine = (m: object) => JSON.stringify({ receivedAt: '2026-11-26T12:00:00.000Z', requestId: 1, message: m });
const good = message('Newsletter Subscribed', { source: 'footer' }, 'ok-1');
const bad = message('Newsletter Subscribed', { source: 'popup' }, 'bad-1');

describe('svc-analytics plan check', () => {
  it('exits 0 with a summary when every message follows the plan (the collector log by default)', () => {
    const dir = tmp();
    fs.mkdirSync(path.join(dir, '.collector'));
    fs.writeFileSync(path.join(dir, '.collector', 'events.jsonl'), logLine(good) + '\n');
    const r = run(['plan', 'check', DEMO_PLAN], dir);
    expect(r).toMatchObject({ code: 0, stdout: 'no violation of the plan in 1 message(s) of 1 file(s)\n' });
  });

  it('exits 1 with one line per violation (file, line, message, place, expectation), then a summary', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'a.jsonl'), [logLine(good), JSON.stringify(bad), JSON.stringify(message('Newsletter Subscribd', {}, 'bad-2'))].join('\n'));
    const r = run(['plan', 'check', DEMO_PLAN, 'a.jsonl'], dir);
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')).toEqual([
      'a.jsonl:2: track "Newsletter Subscribed" (bad-1): /properties/source: expected one of "footer", "checkout", got "popup"',
      'a.jsonl:3: track "Newsletter Subscribd" (bad-2): /event: expected an event of the plan (did you mean "Newsletter Subscribed"?), got "Newsletter Subscribd"',
      '2 violation(s) of the plan (2 event(s)) in 3 message(s) of 1 file(s)',
      '',
    ]);
  });

  it('exits 2, naming why, when the plan or a file cannot be read or the plan is not valid', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'bad-plan.json'), JSON.stringify({ events: { A: { properties: { type: 'numbr' } } } }));
    fs.writeFileSync(path.join(dir, 'x.jsonl'), '');
    expect(run(['plan', 'check', 'missing.json', 'x.jsonl'], dir)).toMatchObject({ code: 2, stderr: expect.stringMatching(/cannot read the plan .*missing\.json \(ENOENT\)/) });
    expect(run(['plan', 'check', 'bad-plan.json', 'x.jsonl'], dir)).toMatchObject({ code: 2, stderr: expect.stringContaining('tracking plan: /events/A/properties/type: one of string') });
    expect(run(['plan', 'check', DEMO_PLAN, 'nope.jsonl'], dir)).toMatchObject({ code: 2, stderr: expect.stringContaining('cannot read nope.jsonl') });
    expect(run(['plan', 'check'], dir).code).toBe(2);
  });
});

describe('svc-analytics plan infer', () => {
  it('writes a plan that the messages satisfy: events, property types, required when always present', () => {
    const dir = tmp();
    const lines = [message('Signed Up', { plan: 'pro', seats: 3 }), message('Signed Up', { plan: 'free', seats: 1.5, coupon: 'X' }), { type: 'identify', messageId: 'i', traits: { email: 'a@b.example' } }];
    fs.writeFileSync(path.join(dir, 'a.jsonl'), lines.map((m) => JSON.stringify(m)).join('\n'));
    expect(run(['plan', 'infer', 'a.jsonl', '--out', 'plan.json'], dir).code).toBe(0);
    const plan = JSON.parse(fs.readFileSync(path.join(dir, 'plan.json'), 'utf8'));
    expect(plan.events['Signed Up'].properties).toEqual({
      type: 'object',
      properties: { coupon: { type: 'string' }, plan: { type: 'string' }, seats: { type: 'number' } },
      required: ['plan', 'seats'],
    });
    expect(plan.identify.traits.required).toEqual(['email']);
    expect(run(['plan', 'check', 'plan.json', 'a.jsonl'], dir)).toMatchObject({ code: 0 });
  });
});

describe('svc-analytics plan types', () => {
  it('writes the declarations the type tests use (test/types/plan/tracking-plan.d.ts is this output)', () => {
    const dir = tmp();
    expect(run(['plan', 'types', DEMO_PLAN, '--out', path.join(dir, 'tracking-plan.d.ts')], dir).code).toBe(0);
    const text = fs.readFileSync(path.join(dir, 'tracking-plan.d.ts'), 'utf8');
    expect(text).toContain('interface SvcAnalyticsTrackingPlan {');
    expect(text).toContain('/** A product went into the cart. */');
    const committed = fs.readFileSync(path.join(ROOT, 'test', 'types', 'plan', 'tracking-plan.d.ts'), 'utf8');
    const plan = JSON.parse(fs.readFileSync(DEMO_PLAN, 'utf8'));
    expect(committed).toBe(planTypes(plan, { source: '../../../demo/tracking-plan.json', specEvents: SPEC_EVENTS }));
  });
});

describe('plan check of nothing', () => {
  it('passes (exit 0, as CONTRACT section 7 says for no violation) and says on stderr that it read no message', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'p.json'), JSON.stringify({ events: {} }));
    fs.writeFileSync(path.join(dir, 'e.jsonl'), '');
    expect(run(['plan', 'check', 'p.json', 'e.jsonl'], dir)).toMatchObject({ code: 0, stderr: expect.stringContaining('no message to check in e.jsonl') });
  });
});

describe('plan files as Windows editors save them', () => {
  it('reads a plan and a log that begin with a byte-order mark', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'p.json'), '\uFEFF' + JSON.stringify({ events: { 'Newsletter Subscribed': { properties: { type: 'object' } } } }));
    fs.writeFileSync(path.join(dir, 'm.jsonl'), '\uFEFF' + logLine(good) + '\n');
    expect(run(['plan', 'check', 'p.json', 'm.jsonl'], dir)).toMatchObject({ code: 0 });
  });
});

describe('plan types: shapes that once came out wrong (found by review 7)', () => {
  const typesOf = (events: object) => planTypes({ events, $defs: { Product: { type: 'object', required: ['product_id'], properties: { product_id: { type: 'string' } } } } }, { source: 'p.json', specEvents: [] });
  it('wraps an array item type of several parts: `[]` after `{...} & (...)` would bind to its last part only', () => {
    const text = typesOf({ 'Cart Saved': { properties: { type: 'object', properties: { products: { type: 'array', items: { type: 'object', required: ['qty'], properties: { qty: { type: 'number' } }, allOf: [{ $ref: '#/$defs/Product' }] } } } } } });
    const products = text.slice(text.indexOf('products'));
    expect(products).toMatch(/^products\?: \(\{/);
    expect(products).toMatch(/\}\)\)?\[\];/);
  });
  it('types a closed object without properties as one that takes no property (not `{}`, which takes anything)', () => {
    expect(typesOf({ 'No Props': { properties: { type: 'object', additionalProperties: false } } })).toContain('"No Props": { [key: string]: never };');
  });
});

describe('svc-analytics collector --plan', () => {
  it('lists plan violations in GET /_/violations, and refuses a plan that is not valid with exit 2', async () => {
    const port = await freePort();
    await startCli(['collector', '--port', String(port), '--any-key', '--plan', DEMO_PLAN, '--quiet']);
    const url = `http://127.0.0.1:${port}`;
    const r = await fetch(url + '/v1/batch', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ batch: [good, bad] }) });
    expect(r.status).toBe(200);
    const violations = await (await fetch(url + '/_/violations')).json();
    expect(violations).toEqual([
      expect.objectContaining({ kind: 'plan', messageId: 'bad-1', event: 'Newsletter Subscribed', pointer: '/properties/source', expected: 'one of "footer", "checkout", got "popup"' }),
    ]);
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'p.json'), '{"events": []}');
    expect(run(['collector', '--port', '0', '--plan', 'p.json'], dir)).toMatchObject({ code: 2, stderr: expect.stringContaining('tracking plan: /events: an object of event names') });
  });
});

describe('plan check and types: what review 11 found', () => {
  it('reads a line that holds a list of messages (a saved GET /_/messages), and refuses a JSON line that is not a message with exit 2', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'p.json'), JSON.stringify({ events: { 'Newsletter Subscribed': { properties: { type: 'object', properties: { source: { enum: ['footer'] } } } } } }));
    fs.writeFileSync(path.join(dir, 'list.jsonl'), JSON.stringify([good, bad]) + '\n');
    expect(run(['plan', 'check', 'p.json', 'list.jsonl'], dir)).toMatchObject({ code: 1, stdout: expect.stringContaining('1 violation(s) of the plan (1 event(s)) in 2 message(s)') });
    fs.writeFileSync(path.join(dir, 'odd.jsonl'), logLine(good) + '\n' + JSON.stringify({ requests: [] }) + '\n');
    expect(run(['plan', 'check', 'p.json', 'odd.jsonl'], dir)).toMatchObject({ code: 2, stderr: expect.stringContaining('odd.jsonl:2 is not a message') });
  });

  it('refuses a plan whose $ref comes back to itself through allOf, anyOf or not, with exit 2 and the place (it checked nothing and exited 1)', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'm.jsonl'), logLine(message('Looped', { a: 1 })) + '\n');
    for (const kw of ['allOf', 'anyOf', 'not']) {
      const loop = kw == 'not' ? { not: { $ref: '#/$defs/A' } } : { [kw]: [{ $ref: '#/$defs/A' }] };
      fs.writeFileSync(path.join(dir, 'p.json'), JSON.stringify({ $defs: { A: loop }, events: { Looped: { properties: { $ref: '#/$defs/A' } } } }));
      expect(run(['plan', 'check', 'p.json', 'm.jsonl'], dir), kw).toMatchObject({ code: 2, stderr: expect.stringMatching(/\$ref: a reference that does not lead back to itself/) });
    }
  });

  it('types an object with patternProperties as open, and tuple items as optional beyond minItems (valid calls compiled as errors)', () => {
    const text = planTypes(
      { events: { Custom: { properties: { type: 'object', patternProperties: { '^x_': { type: 'string' } }, additionalProperties: false } }, Moved: { properties: { type: 'object', properties: { coords: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], minItems: 1 } } } } } },
      { source: 'p.json', specEvents: [] },
    );
    expect(text.slice(text.indexOf('"Custom"'))).toMatch(/^"Custom": \{\s*\[key: string\]: unknown;\s*\}/);
    expect(text).toContain('coords?: [number, number?, ...unknown[]];');
  });
});
