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
 * site can ask again). Otherwise (no decision yet, or not on every listed category): pending.
 */
export function decide(categories: string[] | undefined, preferences: Preferences | undefined, before: Gate): Gate {
  if (!categories) return 'open';
  if (preferences && categories.every((c) => preferences[c] === true)) return 'open';
  if (preferences && categories.some((c) => preferences[c] === false)) return before == 'open' ? 'pending' : 'denied';
  return before == 'denied' ? 'denied' : 'pending';
}

/** The decision as messages carry it: only boolean values; undefined when `value` is not an object. */
export function preferencesOf(value: unknown): Preferences | undefined {
  if (!value || typeof value != 'object' || Array.isArray(value)) return undefined;
  const out: Preferences = {};
  for (const k of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[k];
    if (typeof v == 'boolean' && k != '__proto__') out[k] = v;
  }
  return out;
}
