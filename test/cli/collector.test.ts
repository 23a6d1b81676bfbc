// @vitest-environment node
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
// @ts-ignore: plain ESM without type declarations
import { startCollector, MESSAGE_LIMIT, BATCH_LIMIT, MAX_BODY_READ } from '../../collector/server.mjs';
// @ts-ignore: plain ESM without type declarations
import { startStatic, injectSnippet } from '../../collector/static.mjs';

const KEY = 'test-key';
const basic = (key: string) => 'Basic ' + Buffer.from(key + ':').toString('base64');
const BIN = fileURLToPath(new URL('../../bin/svc-analytics.mjs', import.meta.url));

let seq = 0;
function msg(extra: Record<string, unknown> = {}) {
  seq += 1;
  return { type: 'track', event: 'Clicked', messageId: `msg-${seq}`, anonymousId: 'anon-1', timestamp: new Date().toISOString(), ...extra };
}

const batchBody = (batch: unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ batch, sentAt: new Date().toISOString(), ...extra });

/** A message whose JSON is exactly `bytes` long (ASCII padding). */
function messageOfSize(bytes: number) {
  const m = msg({ properties: { pad: '' } });
  const pad = bytes - Buffer.byteLength(JSON.stringify(m));
  m.properties = { pad: 'x'.repeat(pad) };
  return m;
}

/** Raw HTTP so tests control Origin and bodies exactly; bounded by a timeout. */
function request(url: string, { method = 'GET', headers = {}, body }: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string; json: () => any }>((resolve, reject) => {
    const req = http.request(url, { method, headers, timeout: 10000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) });
      });
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

describe('collector', () => {
  let collector: any;
  let dir: string;
  let logFile: string;

  const post = (p: string, body: string, headers: Record<string, string> = { 'Content-Type': 'application/json', Authorization: basic(KEY) }) =>
    request(collector.url + p, { method: 'POST', headers, body });
  const get = async (p: string) => (await request(collector.url + p)).json();
  const setFault = (f: object) => post('/_/fault', JSON.stringify(f), { 'Content-Type': 'application/json' });

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-collector-'));
    logFile = path.join(dir, 'nested', 'events.jsonl');
    collector = await startCollector({ port: 0, writeKey: KEY, logFile });
  });
  afterAll(async () => {
    await collector.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await post('/_/reset', '', {});
  });

  it('listens on 127.0.0.1 with a free port', () => {
    expect(collector.port).toBeGreaterThan(0);
    expect(collector.url).toBe(`http://127.0.0.1:${collector.port}`);
  });

  it('accepts a batch with Basic auth', async () => {
    const a = msg();
    const b = msg({ type: 'identify', userId: 'u1', event: undefined });
    const res = await post('/v1/batch', batchBody([a, b]));
    expect(res.status).toBe(200);
    const messages = await get('/_/messages');
    expect(messages.map((m: any) => m.messageId)).toEqual([a.messageId, b.messageId]);
    expect(messages[0]).toMatchObject({ ...a, _requestId: expect.any(Number), _receivedAt: expect.any(String) });
    const [rec] = await get('/_/requests');
    expect(rec).toMatchObject({ method: 'POST', path: '/v1/batch', status: 200, auth: 'basic', overLimit: false, fault: null, messageIds: [a.messageId, b.messageId], retryOf: [] });
    expect(await get('/_/stats')).toMatchObject({ requests: 1, messages: 2, retries: 0, bytes: rec.bytes });
  });

  it('accepts a text/plain body carrying the write key (beacon)', async () => {
    const m = msg();
    const res = await post('/v1/batch', batchBody([m], { writeKey: KEY }), { 'Content-Type': 'text/plain;charset=UTF-8' });
    expect(res.status).toBe(200);
    const [rec] = await get('/_/requests');
    expect(rec).toMatchObject({ auth: 'body', contentType: 'text/plain;charset=UTF-8', status: 200 });
    expect((await get('/_/messages'))[0].messageId).toBe(m.messageId);
  });

  it('answers 401 to a wrong or missing key and accepts nothing', async () => {
    const wrongBasic = await post('/v1/batch', batchBody([msg()]), { 'Content-Type': 'application/json', Authorization: basic('nope') });
    const noColon = await post('/v1/batch', batchBody([msg()]), { 'Content-Type': 'application/json', Authorization: 'Basic ' + Buffer.from(KEY).toString('base64') });
    const wrongBody = await post('/v1/batch', batchBody([msg()], { writeKey: 'nope' }), { 'Content-Type': 'text/plain' });
    const none = await post('/v1/batch', batchBody([msg()]), { 'Content-Type': 'application/json' });
    for (const res of [wrongBasic, noColon, wrongBody, none]) {
      expect(res.status).toBe(401);
      expect(res.json()).toEqual({ error: expect.any(String) });
    }
    expect(await get('/_/messages')).toEqual([]);
    expect((await get('/_/requests')).map((r: any) => r.auth)).toEqual(['basic', 'basic', 'body', 'none']);
  });

  it('answers 400 to invalid JSON and to a body without a batch array', async () => {
    expect((await post('/v1/batch', '{nope')).status).toBe(400);
    expect((await post('/v1/batch', '[]')).status).toBe(400);
    expect((await post('/v1/batch', JSON.stringify({ batch: {} }))).status).toBe(400);
    expect((await post('/v1/batch', JSON.stringify({ batch: [1] }))).status).toBe(400);
    expect(await get('/_/messages')).toEqual([]);
  });

  it('answers CORS preflights and puts CORS headers on errors', async () => {
    const pre = await request(collector.url + '/v1/batch', {
      method: 'OPTIONS',
      headers: { Origin: 'http://site.test:8080', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,authorization' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers).toMatchObject({
      'access-control-allow-origin': 'http://site.test:8080',
      vary: 'Origin',
      'access-control-allow-methods': 'POST, GET, OPTIONS',
      'access-control-allow-headers': 'Content-Type, Authorization',
      'access-control-expose-headers': 'Retry-After',
      'access-control-max-age': '600',
    });
    const denied = await post('/v1/batch', batchBody([msg()]), { 'Content-Type': 'application/json', Origin: 'http://site.test:8080' });
    expect(denied.status).toBe(401);
    expect(denied.headers['access-control-allow-origin']).toBe('http://site.test:8080');
    expect(denied.headers['access-control-expose-headers']).toBe('Retry-After');
    const [rec] = await get('/_/requests');
    expect(rec.origin).toBe('http://site.test:8080');
  });

  it('accepts a message of exactly MESSAGE_LIMIT bytes', async () => {
    expect(MESSAGE_LIMIT).toBe(32000);
    const m = messageOfSize(MESSAGE_LIMIT);
    expect(Buffer.byteLength(JSON.stringify(m))).toBe(32000);
    expect((await post('/v1/batch', batchBody([m]))).status).toBe(200);
    expect((await get('/_/messages')).length).toBe(1);
  });

  it('answers 200 to an over-limit message but flags it and accepts nothing from that request', async () => {
    const big = messageOfSize(MESSAGE_LIMIT + 1);
    const res = await post('/v1/batch', batchBody([msg(), big]));
    expect(res.status).toBe(200);
    // UTF-8 bytes count, not characters: 16,001 two-byte characters are over the limit.
    const wide = msg({ properties: { text: 'é'.repeat(16001) } });
    expect(JSON.stringify(wide).length).toBeLessThan(MESSAGE_LIMIT);
    expect((await post('/v1/batch', batchBody([wide]))).status).toBe(200);
    const reqs = await get('/_/requests');
    expect(reqs.map((r: any) => r.overLimit)).toEqual(['message', 'message']);
    expect(await get('/_/messages')).toEqual([]);
    expect((await get('/_/stats')).messages).toBe(0);
  });

  it('answers 200 to an over-limit batch but flags it and accepts nothing', async () => {
    expect(BATCH_LIMIT).toBe(500000);
    const batch = Array.from({ length: 17 }, () => messageOfSize(30000));
    const body = batchBody(batch);
    expect(Buffer.byteLength(body)).toBeGreaterThan(BATCH_LIMIT);
    const res = await post('/v1/batch', body);
    expect(res.status).toBe(200);
    const [rec] = await get('/_/requests');
    expect(rec).toMatchObject({ status: 200, overLimit: 'batch', bytes: Buffer.byteLength(body) });
    // Counted, not kept: the body past the limit was never held, so neither its messages nor their ids are.
    expect(rec).toMatchObject({ messageIds: [], messages: [] });
    expect(await get('/_/messages')).toEqual([]);
  });

  it('appends accepted messages to the JSON-lines log file only', async () => {
    const before = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).length : 0;
    const a = msg();
    const b = msg({ event: 'Second' });
    await post('/v1/batch', batchBody([a, b]));
    await post('/v1/batch', batchBody([messageOfSize(MESSAGE_LIMIT + 10)]));
    await post('/v1/batch', batchBody([msg()]), { 'Content-Type': 'application/json', Authorization: basic('wrong') });
    const lines = fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean).slice(before).map((l) => JSON.parse(l));
    const [rec] = await get('/_/requests');
    expect(lines).toEqual([
      { receivedAt: expect.any(String), requestId: rec.id, message: a },
      { receivedAt: expect.any(String), requestId: rec.id, message: b },
    ]);
    expect(new Date(lines[0].receivedAt).toISOString()).toBe(lines[0].receivedAt);
  });

  it('fails the next N requests with the injected status and Retry-After, then recovers', async () => {
    const fault = await setFault({ status: 503, times: 2, retryAfter: 3 });
    expect(fault.json()).toEqual({ status: { code: 503, remaining: 2, retryAfter: '3' }, delay: null, poison: null });
    const m = msg();
    const origin = { 'Content-Type': 'application/json', Authorization: basic(KEY), Origin: 'http://site.test' };
    const first = await post('/v1/batch', batchBody([m]), origin);
    const second = await post('/v1/batch', batchBody([m]), origin);
    for (const res of [first, second]) {
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('3');
      expect(res.headers['access-control-allow-origin']).toBe('http://site.test');
      expect(res.json()).toEqual({ error: expect.any(String) });
    }
    expect(await get('/_/messages')).toEqual([]);
    expect((await get('/_/fault')).status).toBeNull();
    const third = await post('/v1/batch', batchBody([m]), origin);
    expect(third.status).toBe(200);
    expect(third.headers['retry-after']).toBeUndefined();
    const reqs = await get('/_/requests');
    expect(reqs.map((r: any) => [r.status, r.fault, r.retryOf])).toEqual([[503, 'status', []], [503, 'status', [m.messageId]], [200, null, [m.messageId]]]);
    expect(await get('/_/messages')).toHaveLength(1);
    expect((await get('/_/stats')).retries).toBe(2);
  });

  it('keeps a status fault without times until cleared with {}', async () => {
    await setFault({ status: 429, retryAfter: 'Wed, 21 Oct 2099 07:28:00 GMT' });
    for (let i = 0; i < 3; i++) {
      const res = await post('/v1/batch', batchBody([msg()]));
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBe('Wed, 21 Oct 2099 07:28:00 GMT');
    }
    expect((await setFault({})).json()).toEqual({ status: null, delay: null, poison: null });
    expect((await post('/v1/batch', batchBody([msg()]))).status).toBe(200);
  });

  it('rejects an invalid fault', async () => {
    expect((await setFault({ status: 'x' })).status).toBe(400);
    expect((await setFault({ status: 503, times: 0 })).status).toBe(400);
    expect((await post('/_/fault', 'nope', {})).status).toBe(400);
  });

  it('isolates a poisoned event: only requests carrying it fail', async () => {
    await setFault({ poisonEvent: 'Bad Event' });
    const good = msg({ event: 'Good' });
    const bad = msg({ event: 'Bad Event' });
    const withBad = await post('/v1/batch', batchBody([good, bad]));
    expect(withBad.status).toBe(400);
    expect((await post('/v1/batch', batchBody([good]))).status).toBe(200);
    expect((await post('/v1/track', JSON.stringify(bad))).status).toBe(400);
    await setFault({ poisonEvent: 'Bad Event', poisonStatus: 422 });
    expect((await post('/v1/batch', batchBody([bad]))).status).toBe(422);
    expect((await get('/_/messages')).map((m: any) => m.event)).toEqual(['Good']);
    expect((await get('/_/requests')).map((r: any) => r.fault)).toEqual(['poison', null, 'poison', 'poison']);
  });

  it('delays responses for a slow fault, then processes them', async () => {
    // A wide gap between the delay and a plain answer, so a loaded machine cannot blur the two.
    await setFault({ delayMs: 1000, times: 1 });
    const t0 = Date.now();
    expect((await post('/v1/batch', batchBody([msg()]))).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(990);
    const t1 = Date.now();
    expect((await post('/v1/batch', batchBody([msg()]))).status).toBe(200);
    expect(Date.now() - t1).toBeLessThan(900);
    expect((await get('/_/requests')).map((r: any) => r.fault)).toEqual(['slow', null]);
    expect(await get('/_/messages')).toHaveLength(2);
  });

  it('does not accept a slow request whose client gave up', async () => {
    await setFault({ delayMs: 400, times: 1 });
    const req = http.request(collector.url + '/v1/batch', { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: basic(KEY) } });
    req.on('error', () => {});
    req.end(batchBody([msg()]));
    // the collector holds it (the delay), then the client gives up
    await vi.waitFor(async () => expect((await get('/_/requests')).map((r: any) => r.status)).toEqual([null]), { timeout: 5000, interval: 20 });
    req.destroy();
    // Bounded poll (up to 5 s) until the collector has recorded the abandoned request.
    let rec: any;
    for (let i = 0; i < 50 && !(rec && rec.status === 0); i++) {
      await new Promise((r) => setTimeout(r, 100));
      [rec] = await get('/_/requests');
    }
    expect(rec).toMatchObject({ status: 0, aborted: true, fault: 'slow' });
    expect(await get('/_/messages')).toEqual([]);
  });

  it('reset clears requests, messages, counters and faults', async () => {
    await post('/v1/batch', batchBody([msg()]));
    await setFault({ status: 500, poisonEvent: 'X' });
    const res = await post('/_/reset', '', {});
    expect(res.status).toBe(200);
    expect(await get('/_/requests')).toEqual([]);
    expect(await get('/_/messages')).toEqual([]);
    expect(await get('/_/stats')).toMatchObject({ requests: 0, messages: 0, bytes: 0, retries: 0, violations: 0 });
    expect(await get('/_/fault')).toEqual({ status: null, delay: null, poison: null });
  });

  it('accepts the single-message endpoints, setting type from the path', async () => {
    for (const type of ['identify', 'track', 'page', 'screen', 'group', 'alias']) {
      const { type: _drop, ...body } = msg({ userId: 'u1', groupId: 'g1' });
      const res = await post(`/v1/${type}`, JSON.stringify(body));
      expect(res.status).toBe(200);
    }
    const beacon = await post('/v1/track', JSON.stringify({ ...msg(), writeKey: KEY }), { 'Content-Type': 'text/plain' });
    expect(beacon.status).toBe(200);
    const messages = await get('/_/messages');
    expect(messages.map((m: any) => m.type)).toEqual(['identify', 'track', 'page', 'screen', 'group', 'alias', 'track']);
    expect(messages[6].writeKey).toBeUndefined();
    expect((await post('/v1/track', JSON.stringify(messageOfSize(MESSAGE_LIMIT + 1)))).status).toBe(200);
    expect((await get('/_/requests')).at(-1).overLimit).toBe('message');
    expect((await post('/v1/nope', '{}')).status).toBe(404);
    expect((await request(collector.url + '/v1/batch')).status).toBe(405);
  });

  describe('malformed messages', () => {
    const cases: [string, string, Record<string, unknown>][] = [
      ['type not a call type', 'type', { type: 'purchase' }],
      ['type missing', 'type', { type: undefined }],
      ['messageId missing', 'messageId', { messageId: undefined }],
      ['messageId not a string', 'messageId', { messageId: 42 }],
      ['timestamp missing', 'timestamp', { timestamp: undefined }],
      ['timestamp garbage', 'timestamp', { timestamp: 'yesterday' }],
      ['timestamp with an extended year', 'timestamp', { timestamp: '+275760-09-13T00:00:00.000Z' }],
      ['timestamp of a day that does not exist', 'timestamp', { timestamp: '2023-02-29T10:00:00.000Z' }],
      ['timestamp at 24:00', 'timestamp', { timestamp: '2024-05-01T24:00:00Z' }],
      ['timestamp without a zone', 'timestamp', { timestamp: '2024-05-01T12:00:00' }],
      ['timestamp with a space for T', 'timestamp', { timestamp: '2024-05-01 12:00:00Z' }],
      ['timestamp as unix seconds', 'timestamp', { timestamp: 1714564800 }],
      ['no userId and no anonymousId', 'userId', { anonymousId: undefined }],
      ['empty anonymousId and no userId', 'userId', { anonymousId: '' }],
      ['userId not a string', 'userId', { userId: 42 }],
      ['anonymousId null and no userId', 'userId', { anonymousId: null }],
      ['integrations a string', 'integrations', { integrations: 'all' }],
      ['integrations an array', 'integrations', { integrations: [] }],
      ['integrations value a string', 'integrations.Amplitude', { integrations: { All: true, Amplitude: 'yes' } }],
      ['integrations value an object', 'integrations.Amplitude', { integrations: { Amplitude: { session_id: 1 } } }],
      ['context an array', 'context', { context: [] }],
      ['properties a string', 'properties', { properties: 'x' }],
      ['traits null', 'traits', { type: 'identify', userId: 'u1', traits: null }],
      ['track without event', 'event', { event: undefined }],
      ['track with an empty event', 'event', { event: '' }],
      ['track with a number event', 'event', { event: 5 }],
      ['group without groupId', 'groupId', { type: 'group', event: undefined }],
      ['group with a number groupId', 'groupId', { type: 'group', groupId: 7 }],
      ['objectTypeId a number', 'objectTypeId', { type: 'group', groupId: 'g1', objectTypeId: 1 }],
      ['objectTypeId not an integer', 'objectTypeId', { type: 'group', groupId: 'g1', objectTypeId: '1.5' }],
      ['sentAt on the message not a date-time', 'sentAt', { sentAt: 'now' }],
    ];

    for (const [label, field, change] of cases) {
      it(`answers 400 and accepts nothing from the request: ${label}`, async () => {
        const good = msg();
        const bad = msg(change);
        const res = await post('/v1/batch', batchBody([good, bad]));
        expect(res.status).toBe(400);
        const { error } = res.json();
        expect(error).toContain('batch[1]');
        expect(error).toContain(typeof bad.messageId === 'string' ? `messageId "${bad.messageId}"` : bad.messageId === undefined ? 'no messageId' : `messageId ${bad.messageId}`);
        expect(error).toContain(`: ${field} `);
        expect(await get('/_/messages')).toEqual([]);
        const [rec] = await get('/_/requests');
        expect(rec).toMatchObject({ status: 400, error, overLimit: false });
        expect(rec.malformed).toEqual([expect.objectContaining({ index: 1, field })]);
        expect(await get('/_/stats')).toMatchObject({ messages: 0, rejected: 1 });
      });
    }

    it('refuses a batch whose sentAt is not a date-time, naming the body', async () => {
      for (const sentAt of ['2024-05-01', null, 'soon', '+275760-09-13T00:00:00.000Z']) {
        const res = await post('/v1/batch', batchBody([msg()], { sentAt }));
        expect(res.status).toBe(400);
        expect(res.json().error).toMatch(/^malformed body: sentAt /);
      }
      expect(await get('/_/messages')).toEqual([]);
      expect((await get('/_/stats')).rejected).toBe(4);
    });

    it('refuses a malformed single-message body, with the type taken from the path', async () => {
      const { type: _t, ...group } = msg({ event: undefined });
      const noGroupId = await post('/v1/group', JSON.stringify(group));
      expect(noGroupId.status).toBe(400);
      expect(noGroupId.json().error).toBe(`malformed message (messageId "${group.messageId}"): groupId is required on a group: a string (got nothing)`);
      const { type: _u, ...track } = msg({ timestamp: 'garbage', sentAt: 'later' });
      const twoProblems = await post('/v1/track', JSON.stringify(track));
      expect(twoProblems.status).toBe(400);
      expect(twoProblems.json().error).toContain('timestamp must be an ISO 8601 date-time');
      expect(twoProblems.json().error).toContain('and 1 more');
      const rec = (await get('/_/requests')).at(-1);
      expect(rec.malformed.map((p: any) => [p.index, p.messageId, p.field])).toEqual([[0, track.messageId, 'timestamp'], [0, track.messageId, 'sentAt']]);
      expect(await get('/_/messages')).toEqual([]);
    });

    it('still accepts every well-formed call type, optional fields included', async () => {
      const valid = [
        msg({ integrations: { All: false, Amplitude: true }, context: { library: { name: 'x', version: '1' } }, properties: {}, timestamp: '2024-05-01T12:00:00+05:30', sentAt: '2024-05-01T06:30:00.1Z' }),
        msg({ type: 'identify', event: undefined, userId: 'u1', anonymousId: undefined, traits: { email: 'a@b.c' } }),
        msg({ type: 'page', event: undefined, name: 'Home', properties: { path: '/' }, timestamp: '2024-02-29T23:59:59.999Z' }),
        msg({ type: 'screen', event: undefined, userId: 'u1', anonymousId: '' }),
        msg({ type: 'group', event: undefined, groupId: 'g1', objectTypeId: '2', traits: {} }),
        msg({ type: 'group', event: undefined, groupId: '' }),
        msg({ type: 'alias', event: undefined, userId: 'u2', previousId: 'u1' }),
        // analytics.js (and the service's own SDK, its fork) send userId null before identify
        msg({ userId: null }),
      ];
      const res = await post('/v1/batch', batchBody(valid));
      expect(res.status).toBe(200);
      expect((await get('/_/messages')).map((m: any) => m.messageId)).toEqual(valid.map((m) => m.messageId));
      const [rec] = await get('/_/requests');
      expect(rec).toMatchObject({ status: 200, error: null, malformed: [] });
    });

    it('answers faults, auth and size limits before judging the messages', async () => {
      const bad = () => msg({ timestamp: 'garbage' });
      expect((await post('/v1/batch', batchBody([bad()]), { 'Content-Type': 'application/json', Authorization: basic('nope') })).status).toBe(401);
      expect((await post('/v1/batch', batchBody([bad(), messageOfSize(MESSAGE_LIMIT + 1)]))).status).toBe(200);
      expect((await post('/v1/batch', batchBody([bad(), ...Array.from({ length: 17 }, () => messageOfSize(30000))]))).status).toBe(200);
      await setFault({ status: 503, times: 1 });
      expect((await post('/v1/batch', batchBody([bad()]))).status).toBe(503);
      const reqs = await get('/_/requests');
      expect(reqs.map((r: any) => [r.status, r.overLimit, r.malformed.length])).toEqual([[401, false, 0], [200, 'message', 0], [200, 'batch', 0], [503, false, 0]]);
      expect(await get('/_/messages')).toEqual([]);
    });
  });

  it('lists over-limit, bad-auth and malformed requests in /_/violations, with the reason', async () => {
    const json = { 'Content-Type': 'application/json', Authorization: basic(KEY) };
    await post('/v1/batch', batchBody([msg()]));
    await setFault({ status: 503, times: 1 });
    await post('/v1/batch', batchBody([msg()]));
    await setFault({ poisonEvent: 'Bad Event' });
    await post('/v1/batch', batchBody([msg({ event: 'Bad Event' })]));
    await setFault({});
    expect(await get('/_/violations')).toEqual([]);
    expect((await get('/_/stats')).violations).toBe(0);

    const big = messageOfSize(MESSAGE_LIMIT + 1);
    await post('/v1/batch', batchBody(Array.from({ length: 17 }, () => messageOfSize(30000))));
    await post('/v1/batch', batchBody([msg(), big]));
    await post('/v1/batch', batchBody([msg()]), { ...json, Authorization: basic('nope') });
    await post('/v1/batch', batchBody([msg()]), { 'Content-Type': 'application/json' });
    await post('/v1/batch', '{nope', json);
    await post('/v1/batch', JSON.stringify({ batch: [1] }), json);
    const late = msg({ timestamp: 'garbage' });
    await post('/v1/batch', batchBody([late]));
    await post('/v1/batch', batchBody([msg()]));

    const violations = await get('/_/violations');
    expect(violations.map((r: any) => [r.status, r.violation.kind])).toEqual([
      [200, 'over-limit'], [200, 'over-limit'], [401, 'auth'], [401, 'auth'], [400, 'malformed'], [400, 'malformed'], [400, 'malformed'],
    ]);
    const reasons = violations.map((r: any) => r.violation.reason);
    expect(reasons[0]).toMatch(/^body of \d+ bytes is over the 500000-byte batch limit \(answered 200, dropped\)$/);
    expect(reasons[1]).toBe(`batch[1] (messageId "${big.messageId}") is ${MESSAGE_LIMIT + 1} bytes, over the 32000-byte message limit (answered 200, dropped)`);
    expect(reasons.slice(2, 6)).toEqual(['invalid write key', 'missing write key', 'body is not valid JSON', 'body must be an object with a "batch" array of objects']);
    expect(reasons[6]).toContain(`batch[0] (messageId "${late.messageId}"): timestamp must be an ISO 8601 date-time`);
    expect(violations[6].malformed).toHaveLength(1);
    expect(await get('/_/stats')).toMatchObject({ requests: 11, violations: 7, overLimit: 2, faults: 2 });
    expect((await get('/_/requests')).filter((r: any) => r.violation === null)).toHaveLength(4);

    await post('/_/reset', '', {});
    expect(await get('/_/violations')).toEqual([]);
    expect((await get('/_/stats')).violations).toBe(0);
  });

  it('filters /_/messages and waits for ?min', async () => {
    await post('/v1/batch', batchBody([msg({ event: 'A' }), msg({ event: 'B' })]));
    expect((await get('/_/messages?event=B')).map((m: any) => m.event)).toEqual(['B']);
    const waiting = get('/_/messages?event=C&min=1&timeout=3000');
    await new Promise((r) => setTimeout(r, 50));
    await post('/v1/batch', batchBody([msg({ event: 'C' })]));
    expect((await waiting).map((m: any) => m.event)).toEqual(['C']);
    const t0 = Date.now();
    expect(await get('/_/messages?event=Z&min=1&timeout=100')).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('streams request records over SSE', async () => {
    const events: { event: string; data: any }[] = [];
    const req = http.get(collector.url + '/_/stream');
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no SSE request event')), 3000);
      req.on('response', (res) => {
        expect(res.headers['content-type']).toBe('text/event-stream');
        let buf = '';
        res.on('data', (c) => {
          buf += c;
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const ev = /^event: (.+)$/m.exec(block);
            const data = /^data: (.+)$/m.exec(block);
            if (ev && data) events.push({ event: ev[1], data: JSON.parse(data[1]) });
            if (ev && ev[1] === 'snapshot') post('/v1/batch', batchBody([msg({ event: 'Streamed' })]));
            if (ev && ev[1] === 'request') { clearTimeout(timer); resolve(); }
          }
        });
      });
      req.on('error', reject);
    });
    try {
      await done;
    } finally {
      req.destroy();
    }
    expect(events[0].event).toBe('snapshot');
    const rec = events.find((e) => e.event === 'request')!.data;
    expect(rec).toMatchObject({ status: 200, path: '/v1/batch' });
    expect(rec.messages[0].event).toBe('Streamed');
  });

  it('serves the inspector page at /', async () => {
    const res = await request(collector.url + '/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('/_/stream');
    expect(res.text).not.toMatch(/<(script|link)[^>]+(src|href)="https?:/);
    expect(res.text).not.toContain('innerHTML');
  });
});

describe('collector options', () => {
  it('accepts any key with writeKey: null and keeps state per instance', async () => {
    const a = await startCollector({ port: 0, writeKey: null });
    const b = await startCollector({ port: 0 });
    try {
      const body = batchBody([msg()]);
      expect((await request(a.url + '/v1/batch', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body })).status).toBe(200);
      expect((await request(a.url + '/v1/batch', { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: basic('whatever') }, body })).status).toBe(200);
      expect((await request(b.url + '/v1/batch', { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: basic('dev-write-key') }, body })).status).toBe(200);
      expect(a.state.stats.requests).toBe(2);
      expect(b.state.stats.requests).toBe(1);
      b.setFault({ status: 503 });
      expect(a.state.fault.status).toBeNull();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('close() ends open SSE streams and pending delays promptly', async () => {
    const c = await startCollector({ port: 0, writeKey: null });
    const sse = http.get(c.url + '/_/stream');
    sse.on('error', () => {});
    await new Promise((r) => sse.on('response', r));
    c.setFault({ delayMs: 60000 });
    const slow = request(c.url + '/v1/batch', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: batchBody([msg()]) }).catch((e) => e);
    await vi.waitFor(() => expect(c.state.requests.map((r: any) => r.status)).toEqual([null]), { timeout: 5000, interval: 20 }); // held in its delay
    const t0 = Date.now();
    await c.close();
    expect(Date.now() - t0).toBeLessThan(2000);
    await slow;
  });
});

describe('collector trust (CONTRACT section 6): who may read and drive it', () => {
  let collector: any;
  const OTHER = 'http://evil.test:8080';
  const DEMO = 'http://localhost:3000';
  const at = (p: string, headers: Record<string, string> = {}, method = 'GET', body?: string) => request(collector.url + p, { method, headers, body });
  const ingest = (headers: Record<string, string> = {}) =>
    at('/v1/batch', { 'Content-Type': 'text/plain', ...headers }, 'POST', batchBody([msg({ event: 'Kept' })], { writeKey: KEY }));
  const own = () => collector.url;
  const hasCors = (h: http.IncomingHttpHeaders) => Object.keys(h).filter((k) => k.startsWith('access-control-'));

  beforeAll(async () => {
    collector = await startCollector({ port: 0, writeKey: KEY, allowOrigins: [DEMO] });
  });
  afterAll(() => collector.close());
  beforeEach(async () => {
    collector.reset();
    expect((await ingest()).status).toBe(200);
  });

  it('ingestion answers any origin, a private-network preflight included, as the real API does', async () => {
    const pre = await at('/v1/batch', { Origin: OTHER, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Private-Network': 'true' }, 'OPTIONS');
    expect(pre.status).toBe(204);
    expect(pre.headers).toMatchObject({ 'access-control-allow-origin': OTHER, 'access-control-allow-private-network': 'true' });
    const res = await ingest({ Origin: OTHER, 'Sec-Fetch-Site': 'cross-site' });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(OTHER);
  });

  it('the control API and the inspector refuse other origins (403, no CORS headers): nothing read, nothing reset', async () => {
    for (const p of ['/_/messages', '/_/requests', '/_/violations', '/_/stats', '/_/fault', '/_/info', '/_/stream', '/']) {
      const res = await at(p, { Origin: OTHER });
      expect(res.status, p).toBe(403);
      expect(hasCors(res.headers), p).toEqual([]);
      expect(res.text, p).not.toContain('Kept');
    }
    for (const p of ['/_/reset', '/_/fault']) {
      const res = await at(p, { Origin: OTHER, 'Content-Type': 'application/json' }, 'POST', JSON.stringify({ status: 503 }));
      expect(res.status, p).toBe(403);
    }
    expect(collector.state.messages).toHaveLength(1);
    expect(collector.state.fault.status).toBeNull();
  });

  it('refuses preflights from other origins, a private-network one included', async () => {
    for (const p of ['/_/reset', '/_/messages', '/']) {
      const pre = await at(p, { Origin: OTHER, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type', 'Access-Control-Request-Private-Network': 'true' }, 'OPTIONS');
      expect(pre.status, p).toBe(403);
      expect(hasCors(pre.headers), p).toEqual([]);
    }
  });

  it('answers its own origin and allowed ones (CORS for those), at each loopback name', async () => {
    expect((await at('/_/messages', { Origin: own() })).json()).toHaveLength(1);
    const demo = await at('/_/messages', { Origin: DEMO });
    expect(demo.status).toBe(200);
    expect(demo.headers).toMatchObject({ 'access-control-allow-origin': DEMO, vary: 'Origin' });
    const pre = await at('/_/reset', { Origin: DEMO, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type', 'Access-Control-Request-Private-Network': 'true' }, 'OPTIONS');
    expect(pre.status).toBe(204);
    expect(pre.headers).toMatchObject({ 'access-control-allow-origin': DEMO, 'access-control-allow-private-network': 'true' });
    for (const name of ['127.0.0.1', 'localhost', '[::1]']) {
      const host = `${name}:${collector.port}`;
      const res = await at('/_/messages', { Host: host, Origin: `http://${host}` });
      expect(res.status, host).toBe(200);
    }
    // Scripts and tests on this machine send no Origin.
    expect((await at('/_/reset', {}, 'POST', '')).status).toBe(200);
  });

  it('allowOrigin() adds an origin, normalised; a value that is not an origin throws', async () => {
    expect((await at('/_/stats', { Origin: 'http://app.test:5173' })).status).toBe(403);
    expect(collector.allowOrigin('HTTP://App.test:5173/')).toBe('http://app.test:5173');
    expect((await at('/_/stats', { Origin: 'http://app.test:5173' })).status).toBe(200);
    for (const bad of ['javascript:alert(1)', 'http://app.test/path', 'app.test', 'file:///x']) expect(() => collector.allowOrigin(bad), bad).toThrow(/not an origin/);
  });

  it('refuses a Host that is not a loopback name (DNS rebinding), for the inspector and the control API', async () => {
    for (const host of [`rebind.example:${collector.port}`, `localhost.evil.example:${collector.port}`, `127.0.0.1.nip.io:${collector.port}`]) {
      for (const p of ['/', '/_/messages']) {
        const res = await at(p, { Host: host });
        expect(res.status, `${host} ${p}`).toBe(403);
        expect(res.text).toMatch(/not a loopback name/);
      }
      expect((await at('/_/reset', { Host: host, Origin: `http://${host}`, 'Content-Type': 'application/json' }, 'POST', '{}')).status).toBe(403);
    }
    expect(collector.state.messages).toHaveLength(1);
  });

  it('takes no CORS-simple POST from a browser: JSON only, and no cross-site request without an allowed Origin', async () => {
    // A same-origin page must still send JSON; a text/plain, form or empty POST would need no preflight elsewhere.
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '']) {
      const headers: Record<string, string> = { Origin: own(), ...(type && { 'Content-Type': type }) };
      expect((await at('/_/reset', headers, 'POST', type ? '{}' : undefined)).status, type).toBe(415);
      expect((await at('/_/reset', { ...headers, Origin: DEMO }, 'POST', type ? '{}' : undefined)).status, type).toBe(415);
    }
    // No Origin but a browser's cross-site marker (a no-cors load): refused, GET or POST.
    expect((await at('/_/reset', { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'no-cors' }, 'POST', '{}')).status).toBe(403);
    expect((await at('/_/messages', { 'Sec-Fetch-Site': 'same-site', 'Sec-Fetch-Mode': 'no-cors' })).status).toBe(403);
    expect(collector.state.messages).toHaveLength(1);
    expect((await at('/_/reset', { Origin: own(), 'Content-Type': 'application/json' }, 'POST', '{}')).status).toBe(200);
    expect(collector.state.messages).toHaveLength(0);
  });

  it('a link from another site opens the inspector, which no other site may frame', async () => {
    const res = await at('/', { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document' });
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({ 'content-security-policy': "frame-ancestors 'self'", 'x-frame-options': 'SAMEORIGIN' });
    expect(hasCors(res.headers)).toEqual([]);
    // Typed in the address bar.
    expect((await at('/_/messages', { 'Sec-Fetch-Site': 'none', 'Sec-Fetch-Mode': 'navigate' })).status).toBe(200);
  });

  it('a collector started on a name of its own answers that name too', async () => {
    const named = await startCollector({ port: 0, host: 'localhost' });
    try {
      expect((await request(named.url + '/_/stats', { headers: { Host: `localhost:${named.port}` } })).status).toBe(200);
      expect((await request(named.url + '/_/stats', { headers: { Host: `evil.example:${named.port}` } })).status).toBe(403);
    } finally {
      await named.close();
    }
  });
});

describe('collector limits', () => {
  let collector: any;
  beforeAll(async () => {
    collector = await startCollector({ port: 0, writeKey: null });
  });
  afterAll(() => collector.close());
  beforeEach(() => collector.reset());

  /** Sends `size` bytes of body (chunked when `declare` is false) and resolves with the answer, whatever the socket does after. */
  function flood(p: string, size: number, declare: boolean) {
    return new Promise<{ status: number; body: string; closed: boolean }>((resolve, reject) => {
      const headers: Record<string, string> = { 'Content-Type': 'application/json', ...(declare && { 'Content-Length': String(size) }) };
      const req = http.request(collector.url + p, { method: 'POST', headers, timeout: 20000 });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body, closed: res.headers.connection === 'close' }));
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (e) => (req.destroyed && !req.writableEnded ? undefined : reject(e)));
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const pump = () => {
        while (sent < size) {
          const part = chunk.subarray(0, Math.min(chunk.length, size - sent));
          sent += part.length;
          if (!req.write(part)) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
  }

  it('stops reading a body past MAX_BODY_READ: 413, the connection closed, nothing kept', async () => {
    expect(MAX_BODY_READ).toBeLessThan(8 * 1024 * 1024);
    for (const declare of [true, false]) {
      const res = await flood('/v1/batch', MAX_BODY_READ * 4, declare);
      expect(res.status).toBe(413);
      expect(res.closed).toBe(true);
    }
    const records = collector.state.requests;
    expect(records.map((r: any) => [r.status, r.overLimit, r.violation?.kind, r.messages.length])).toEqual([[413, 'batch', 'over-limit', 0], [413, 'batch', 'over-limit', 0]]);
    // The control API takes small bodies only.
    expect((await flood('/_/fault', 1024 * 1024, true)).status).toBe(413);
    // It still answers afterwards.
    expect((await request(collector.url + '/_/stats')).json()).toMatchObject({ overLimit: 2 });
  });

  it('reads an over-limit body under MAX_BODY_READ to its end and answers 200 overLimit, as the service does', async () => {
    const res = await flood('/v1/batch', BATCH_LIMIT * 2, true);
    expect(res).toMatchObject({ status: 200, closed: false });
    expect(collector.state.requests[0]).toMatchObject({ overLimit: 'batch', bytes: BATCH_LIMIT * 2, messages: [] });
  });

  it('keeps the ids, not the messages, of a request with an over-limit message', async () => {
    const small = msg();
    const big = messageOfSize(MESSAGE_LIMIT + 1);
    expect((await request(collector.url + '/v1/batch', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: batchBody([small, big]) })).status).toBe(200);
    expect(collector.state.requests[0]).toMatchObject({ overLimit: 'message', messageIds: [small.messageId, big.messageId], messages: [] });
  });

  it('holds at most maxBytes of request records and of accepted messages, dropping the oldest', async () => {
    const c = await startCollector({ port: 0, writeKey: null, maxBytes: 100_000 });
    try {
      const sent: string[] = [];
      for (let i = 0; i < 10; i += 1) {
        const batch = [messageOfSize(20000), messageOfSize(20000)];
        sent.push(...batch.map((m) => m.messageId));
        const res = await request(c.url + '/v1/batch', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: batchBody(batch) });
        expect(res.status).toBe(200);
      }
      expect(c.state.stats.messages).toBe(20);
      // 400 KB received; 100 KB held of each: the newest.
      expect(c.state.messages.length).toBeLessThanOrEqual(5);
      expect(c.state.messages.length).toBeGreaterThanOrEqual(4);
      expect(c.state.messages.map((m: any) => m.messageId)).toEqual(sent.slice(-c.state.messages.length));
      const held = c.state.requests.reduce((n: number, r: any) => n + r.bytes, 0);
      expect(held).toBeLessThanOrEqual(100_000);
      expect(c.state.requests.at(-1).messageIds).toEqual(sent.slice(-2));
    } finally {
      await c.close();
    }
  });
});

describe('static server', () => {
  let site: any;
  let root: string;
  let dist: string;
  let snippetFile: string;
  const get = (p: string) => request(site.url + p);

  beforeAll(async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-static-'));
    root = path.join(base, 'site');
    dist = path.join(base, 'dist');
    fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
    fs.mkdirSync(dist);
    fs.writeFileSync(path.join(base, 'secret.txt'), 'SECRET');
    fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>home</title><!--svc:snippet--><p>home</p>');
    fs.writeFileSync(path.join(root, 'csp.html'), '<!--svc:snippet nonce="abc123"--><p>csp</p>');
    fs.writeFileSync(path.join(root, 'sub', 'index.html'), '<p>sub</p>');
    fs.writeFileSync(path.join(root, 'app.js'), 'console.log(1)');
    fs.writeFileSync(path.join(root, 'data.json'), '{}');
    fs.writeFileSync(path.join(dist, 'analytics.min.js'), 'window.x=1');
    fs.symlinkSync(path.join(base, 'secret.txt'), path.join(root, 'link.txt'));
    snippetFile = path.join(dist, 'snippet.min.js');
    fs.writeFileSync(snippetFile, 'window.analytics=[]');
    site = await startStatic({ root, port: 0, mounts: { '/dist/': dist }, snippetFile, headers: { 'X-Test': 'yes' } });
  });
  afterAll(async () => {
    await site.close();
    fs.rmSync(path.dirname(root), { recursive: true, force: true });
  });

  it('serves files with content types, no-store and extra headers', async () => {
    const js = await get('/app.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toMatch(/^text\/javascript/);
    expect(js.headers['cache-control']).toBe('no-store');
    expect(js.headers['x-test']).toBe('yes');
    expect((await get('/data.json')).headers['content-type']).toMatch(/^application\/json/);
    const mounted = await get('/dist/analytics.min.js');
    expect(mounted.status).toBe(200);
    expect(mounted.text).toBe('window.x=1');
  });

  it('refuses path traversal outside root and mounts', async () => {
    for (const p of ['/../secret.txt', '/%2e%2e/secret.txt', '/..%2fsecret.txt', '/dist/..%2f..%2fsecret.txt', '/sub/%2e%2e%2f%2e%2e%2fsecret.txt', '/link.txt']) {
      const res = await get(p);
      expect(res.status, p).toBeGreaterThanOrEqual(400);
      expect(res.text, p).not.toContain('SECRET');
    }
    expect((await get('/a%00b')).status).toBe(400);
  });

  it('injects the snippet file at the marker, read at request time', async () => {
    const home = await get('/');
    expect(home.headers['content-type']).toMatch(/^text\/html/);
    expect(home.text).toContain('<title>home</title><script>window.analytics=[]</script><p>home</p>');
    fs.writeFileSync(snippetFile, 'window.analytics=["v2"];"</script>"');
    const again = await get('/index.html');
    expect(again.text).toContain('<script>window.analytics=["v2"];"<\\/script>"</script>');
    const csp = await get('/csp.html');
    expect(csp.text).toContain('<script nonce="abc123">window.analytics=["v2"]');
    expect(injectSnippet('<!--svc:snippet-->', 'a')).toBe('<script>a</script>');
  });

  it('falls back to index.html for extension-less unknown paths only', async () => {
    const spa = await get('/products/42');
    expect(spa.status).toBe(200);
    expect(spa.text).toContain('<p>home</p>');
    expect((await get('/missing.js')).status).toBe(404);
    expect((await get('/dist/nothing')).status).toBe(404);
    const sub = await get('/sub/');
    expect(sub.text).toBe('<p>sub</p>');
    const redirect = await get('/sub');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe('/sub/');
  });

  it('adds a CSP header from ?csp= on HTML only', async () => {
    const res = await get("/csp.html?csp=" + encodeURIComponent("script-src 'nonce-abc123'"));
    expect(res.headers['content-security-policy']).toBe("script-src 'nonce-abc123'");
    expect((await get('/app.js?csp=x')).headers['content-security-policy']).toBeUndefined();
  });
});

describe('cli', () => {
  /** Runs the CLI until `until` matches its output or it exits; always bounded. */
  function runCli(args: string[], until: RegExp, cwd: string) {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const result = new Promise<{ out: string; code: number | null }>((resolve) => {
      const timer = setTimeout(() => resolve({ out, code: null }), 8000);
      const check = (c: Buffer) => {
        out += c;
        if (until.test(out)) { clearTimeout(timer); resolve({ out, code: null }); }
      };
      child.stdout.on('data', check);
      child.stderr.on('data', check);
      child.on('exit', (code) => { clearTimeout(timer); resolve({ out, code }); });
    });
    return { child, result };
  }

  let cwd: string;
  beforeEach(() => { cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-')); });
  afterEach(() => fs.rmSync(cwd, { recursive: true, force: true }));

  it('starts a collector, logs to the --log file and stops on SIGINT', async () => {
    const { child, result } = runCli(['collector', '--port', '0', '--quiet', '--log', path.join('.collector', 'events.jsonl')], /Ctrl-C/, cwd);
    const { out } = await result;
    const url = /Collector: (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1];
    const res = await request(url + '/v1/batch', { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: basic('dev-write-key') }, body: batchBody([msg()]) });
    expect(res.status).toBe(200);
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(fs.readFileSync(path.join(cwd, '.collector', 'events.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('says clearly when the port is taken and exits 1', async () => {
    const busy = await startCollector({ port: 0 });
    try {
      const { child, result } = runCli(['collector', '--port', String(busy.port), '--no-log'], /$^/, cwd);
      const { out, code } = await result;
      if (code === null) child.kill();
      expect(code).toBe(1);
      expect(out).toMatch(new RegExp(`port ${busy.port} .*already in use`));
    } finally {
      await busy.close();
    }
  });

  it('prints help', async () => {
    const { result } = runCli(['--help'], /$^/, cwd);
    const { out, code } = await result;
    expect(code).toBe(0);
    expect(out).toContain('svc-analytics collector');
    expect(out).toContain('svc-analytics start');
  });
});

describe('bounded memory: any website can post to /v1/* (security-5 N4)', () => {
  it('keeps at most maxMessages plan violations and remembered messageIds, and no id longer than a ULID could be', async () => {
    const c = await startCollector({ port: 0, writeKey: KEY, maxMessages: 3, plan: { events: { Planned: {} } } });
    try {
      const send = (batch: unknown[]) =>
        fetch(`${c.url}/v1/batch`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: basic(KEY) }, body: batchBody(batch) });
      for (let i = 0; i < 4; i++) expect((await send([msg({ event: 'Unplanned' }), msg({ event: 'Unplanned' })])).status).toBe(200);
      expect(c.state.planViolations.length).toBe(3);
      expect(c.state.seen.size).toBe(3);
      // the latest are kept: a retry of the last message is still told
      const last = c.state.messages.at(-1);
      await send([{ ...last, _requestId: undefined, _receivedAt: undefined }]);
      expect((await (await fetch(`${c.url}/_/requests`)).json()).at(-1).retryOf).toEqual([last.messageId]);
      const long = msg({ messageId: 'x'.repeat(129) });
      await send([long]);
      expect(c.state.seen.has(long.messageId)).toBe(false);
    } finally {
      await c.close();
    }
  });
});
