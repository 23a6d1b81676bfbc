import { randomBytes } from './boundary';

// A monotonic ULID (https://github.com/ulid/spec): 48-bit time in ms and 80 random bits, in Crockford's base32.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** 16 random base32 digits (80 bits): `crypto.getRandomValues`, or `Math.random` where the page's crypto throws. */
function randomPart(): string {
  let s = '';
  for (const b of randomBytes(16)) s += ALPHABET[b & 31];
  return s;
}

/** The 10 base32 digits of a time in ms (48 bits). */
export function encodeTime(ms: number): string {
  let s = '';
  for (let i = 0; i < 10; i++, ms = Math.floor(ms / 32)) s = ALPHABET[ms % 32] + s;
  return s;
}

/** The base32 string plus one (`…ZZ` carries); undefined when every digit is Z (80 bits overflow). */
function increment(s: string): string | undefined {
  for (let i = s.length - 1; i >= 0; i--) {
    const d = ALPHABET.indexOf(s[i]);
    if (d < 31) return s.slice(0, i) + ALPHABET[d + 1] + '0'.repeat(s.length - 1 - i);
  }
  return undefined;
}

/**
 * A ULID factory whose ids sort in creation order even within one millisecond (and when the clock goes back): the
 * random part is incremented from the last id, as the spec's monotonic mode asks.
 */
export function monotonicUlid() {
  let lastTime = -1;
  let lastRandom = '';
  let timePart = '';
  return (time: number): string => {
    const next = time <= lastTime && increment(lastRandom);
    if (next) lastRandom = next;
    else {
      // a new millisecond; or 2^80 ids in this one (never in practice): borrow the next millisecond
      lastTime = time > lastTime ? time : lastTime + 1;
      lastRandom = randomPart();
      timePart = encodeTime(lastTime);
    }
    return timePart + lastRandom;
  };
}
