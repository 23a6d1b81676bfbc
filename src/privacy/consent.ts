import { hasOwn, ownKeys } from '../message/validate';

/**
 * Consent and opt-out (CONTRACT sections 2-3): which state a page is in, as a pure function of the site's consent
 * categories, the visitor's decision and the state before it.
 *
 * - `open`: messages are stored and sent; identity persists.
 * - `pending`: consent-pending mode: calls are held in memory; nothing is written and no request is made.
 * - `denied`: consent refused: calls are discarded as they are made (`consent_denied`) until a grant.
 * - `out`: the visitor opted out (or sent GPC with `respectGPC`): calls are refused (`opted_out`).
 */
export type Gate = 'open' | 'pending' | 'denied' | 'out';

/** The consent decision the site passes to `consent()`: its category names to booleans. */
export type Preferences = Record<string, boolean>;

/**
 * The state after a decision; pure. Without consent categories the page is open. Every listed category granted:
 * open. One refused: denied, or, when consent was granted before (a withdrawal), pending again (calls are held, the
 * site can ask again). Otherwise (no decision yet, or not on every listed category): pending. Only the decision's own
 * properties count: a category the page put on `Object.prototype` (or named like one of its members) is undecided.
 */
export function decide(categories: string[] | undefined, preferences: Preferences | undefined, before: Gate): Gate {
  if (!categories) return 'open';
  const is = (v: boolean) => (c: string) => hasOwn.call(preferences, c) && preferences![c] === v;
  if (preferences && categories.every(is(true))) return 'open';
  if (preferences && categories.some(is(false))) return before == 'open' ? 'pending' : 'denied';
  return before == 'denied' ? 'denied' : 'pending';
}

/** The decision as messages carry it: its own boolean values; undefined when `value` is not an object. */
export function preferencesOf(value: unknown): Preferences | undefined {
  if (!value || typeof value != 'object' || Array.isArray(value)) return undefined;
  const out: Preferences = {};
  for (const k of ownKeys(value)) {
    const v = (value as Record<string, unknown>)[k];
    // (a `__proto__` key: a boolean does not set a prototype, and it is no own property then, so it is left out)
    if (typeof v == 'boolean') out[k] = v;
  }
  return out;
}

/** The category a `consent` load option without a list gates on: no decision grants it (see `categoriesOf`). */
export const UNLISTED = '(the consent option lists no categories)';

/**
 * The categories of the `consent` load option (CONTRACT section 3); undefined for no gating (no option, or a false
 * one, as the stub reads it). A list given as a string (`{ categories: 'C0002' }`) or as the option itself
 * (`['C0002']`) is read as meant. Any other shape fails closed: it gates on `UNLISTED`, which no decision grants, so
 * nothing is stored or sent until the option is fixed (the caller reports it). Own properties only.
 */
export function categoriesOf(option: unknown): string[] | undefined {
  if (!option) return undefined;
  const listed = Array.isArray(option) ? option : hasOwn.call(option, 'categories') ? (option as { categories: unknown }).categories : undefined;
  return Array.isArray(listed) ? listed.map(String) : typeof listed == 'string' ? [listed] : [UNLISTED];
}
