import { describe, expect, it } from 'vitest';
import { createAnswer, type AnswerDeps } from '../../src/delivery/answer';
import type { QueueRecord } from '../../src/delivery/records';
import type { Answer } from '../../src/delivery/transport';
import type { Message } from '../../src/message/types';
import type { AnalyticsError } from '../../src/message/errors';

const rec = (id: string): QueueRecord => ({ id, message: { messageId: id } as unknown as Message, bytes: 10, queuedAt: 0, attempts: 0, owner: 'me' });
const batch = (ids: string) => ids.split('').map(rec);
const ans = (status: number, more: Partial<Answer> = {}): Answer => ({ _status: status, _retryAfter: null, ...more });

// The answer handler on deps that log every effect, in order; `sent`: what the halves of a refused batch answer.
function setup(o: { online?: boolean; sent?: boolean } = {}) {
  const log: string[] = [];
  const ids = (rs: { messageId?: string; id?: string }[]) => rs.map((r) => r.messageId ?? r.id).join('');
  const deps = {
    _handoff: {
      _answered: (i: string[], ok: boolean) => void log.push(`answered ${i.join('')} ${ok}`),
      _removed: async (i: string[]) => void log.push(`removed ${i.join('')}`),
      _ledger: { _delivered: (messages: Message[]) => void log.push(`delivered ${ids(messages)}`) },
    },
    _queue: { _flushed: async () => void log.push('flushed') },
    _platform: { _onLine: () => o.online ?? true },
    emit: (name: string, messages: Message[]) => void log.push(`${name} ${ids(messages)}`),
    report: (e: AnalyticsError) => void log.push(`report ${e.code}`),
    _offline: () => void log.push('offline'),
    _resume: () => void log.push('resume'),
    _backoff: (i: string[], a: Answer, store: boolean) => void log.push(`backoff ${i.join('')} ${a._status} ${store}`),
  } as unknown as AnswerDeps;
  const send = async (b: QueueRecord[]) => (log.push(`send ${ids(b)}`), o.sent ?? true);
  return { log, settle: createAnswer(deps, send) };
}

describe('createAnswer', () => {
  // [case, batch, answer, tookOver, erased, online, resolves, effects in order]
  const table: [string, string, Answer, boolean, boolean, boolean, boolean, string[]][] = [
    ['200: removed, then delivered once the queue has written', 'ab', ans(200), false, false, true, true, ['answered ab true', 'resume', 'removed ab', 'flushed', 'delivered ab']],
    ['204 is a 2xx too', 'a', ans(204), false, false, true, true, ['answered a true', 'resume', 'removed a', 'flushed', 'delivered a']],
    ['500: kept, backs off, the pass stops', 'ab', ans(500), false, false, true, false, ['answered ab false', 'backoff ab 500 true']],
    ['408: backs off', 'a', ans(408), false, false, true, false, ['answered a false', 'backoff a 408 true']],
    ['429: backs off', 'a', ans(429, { _retryAfter: '5' }), false, false, true, false, ['answered a false', 'backoff a 429 true']],
    ['401: the key, not a message: backs off', 'ab', ans(401), false, false, true, false, ['answered ab false', 'backoff ab 401 true']],
    ['a network error online: backs off, the note kept', 'a', ans(0), false, false, true, false, ['backoff a 0 true']],
    ['a network error offline: the offline hook, then backs off', 'a', ans(0), false, false, false, false, ['offline', 'backoff a 0 true']],
    ['a request a page exit took over: its attempt is not stored', 'a', ans(0), true, false, true, false, ['backoff a 0 false']],
    ['a redirect: an answer, backs off, reported', 'a', ans(0, { _redirected: true }), false, false, true, false, ['answered a false', 'backoff a 0 true', 'report delivery_redirected']],
    ['400 for a batch: its halves go out at once, nothing counted', 'abc', ans(400), false, false, true, true, ['answered abc false', 'send ab', 'send c']],
    ['413 for a batch: split too', 'ab', ans(413), false, false, true, true, ['answered ab false', 'send a', 'send b']],
    ['422 for a batch of five: halves of three and two', 'abcde', ans(422), false, false, true, true, ['answered abcde false', 'send abc', 'send de']],
    ['422 alone, nothing accepted since: kept and retried (the endpoint may fail), the pass goes on', 'a', ans(422), false, false, true, true, ['answered a false', 'backoff a 422 true']],
    ['erased since it was sent, 200: delivered, nothing removed or noted', 'ab', ans(200), false, true, true, true, ['delivered ab']],
    ['erased since it was sent, 500: nothing at all', 'ab', ans(500), false, true, true, true, []],
  ];
  it.each(table)('%s', async (_, ids, answer, tookOver, erased, online, goesOn, effects) => {
    const { log, settle } = setup({ online });
    expect(await settle(batch(ids), answer, tookOver, erased)).toBe(goesOn);
    expect(log).toEqual(effects);
  });

  it('stops splitting once a half fails (the pass stops)', async () => {
    const { log, settle } = setup({ sent: false });
    expect(await settle(batch('abcd'), ans(400), false, false)).toBe(false);
    expect(log).toEqual(['answered abcd false', 'send ab']);
  });

  it('drops a message refused alone once a request sent after its first refusal was accepted', async () => {
    const { log, settle } = setup();
    await settle(batch('a'), ans(400), false, false); // first refusal: kept
    await settle(batch('b'), ans(200), false, false); // a later request accepted
    log.length = 0;
    expect(await settle(batch('a'), ans(400), false, false)).toBe(true);
    expect(log).toEqual(['answered a false', 'removed a', 'report delivery_rejected']);
  });

  it('reports a redirect once a page', async () => {
    const { log, settle } = setup();
    await settle(batch('a'), ans(0, { _redirected: true }), false, false);
    await settle(batch('a'), ans(0, { _redirected: true }), false, false);
    expect(log.filter((l) => l.startsWith('report'))).toEqual(['report delivery_redirected']);
  });
});
