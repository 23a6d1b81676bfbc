// The retry classification at its edge (found missing by mutation testing, `npm run mutate`).
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/delivery/retry';

describe('classify', () => {
  it('only 2xx is delivered: a 300 (a redirect the browser did not follow) is retried, never dropped as delivered', () => {
    expect(classify(299)).toBe('ok');
    expect(classify(300)).toBe('retry');
  });
});
