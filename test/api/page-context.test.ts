import { describe, expect, it } from 'vitest';
import { createContextCache } from '../../src/api/page-context';
import type { Environment } from '../../src/message/context';
import { byteLength, stringify } from '../../src/message/validate';

// The page-context cache (src/api/page-context.ts): one context per page and decision, built, frozen and measured once.
const ENV: Environment = { userAgent: 'UA', locale: 'en-GB', timezone: 'Europe/Paris', screen: { width: 1, height: 2, density: 1 } };
const PAGE: [string, string, string] = ['https://shop.example/a?utm_source=news', 'A', 'https://ref.example/'];

describe('the page-context cache', () => {
  it('builds the context of a page once: the same page and decision give the same (frozen) context, measured', () => {
    const context = createContextCache(ENV);
    const first = context(PAGE, undefined);
    expect(context([...PAGE], undefined)).toBe(first);
    expect(Object.isFrozen(first.context)).toBe(true);
    expect(Object.isFrozen(first.context.page)).toBe(true);
    expect(first.contextBytes).toBe(byteLength(stringify(first.context)));
    expect(first.context.campaign).toEqual({ source: 'news' });
    expect(first.page).toEqual(first.context.page);
  });

  it('builds it again when the page (URL, title or referrer) or the consent decision changed', () => {
    const context = createContextCache(ENV);
    const first = context(PAGE, undefined);
    const titled = context([PAGE[0], 'B', PAGE[2]], undefined);
    expect(titled).not.toBe(first);
    expect(titled.context.page.title).toBe('B');
    const decision = { C0002: true };
    const decided = context([PAGE[0], 'B', PAGE[2]], decision);
    expect(decided).not.toBe(titled);
    expect(decided.context.consent).toEqual({ categoryPreferences: decision });
    expect(decided.contextBytes).toBe(byteLength(stringify(decided.context)));
    expect(context([PAGE[0], 'B', PAGE[2]], decision)).toBe(decided);
  });
});
