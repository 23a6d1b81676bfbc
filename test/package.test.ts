// @vitest-environment node
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// The package's public entry points, resolved the way a user's bundler or Node resolves them: by name, through
// the `exports` map (run after `npm run build`).
const pkg = JSON.parse(readFileSync('package.json', 'utf8'));

describe('package exports', () => {
  it('resolves svc-analytics/snippet to the generator, and it works', async () => {
    const { snippet } = await import('svc-analytics/snippet');
    const js = snippet({ writeKey: 'wk', apiHost: 'api.example.com', page: true });
    expect(js).toContain('analytics.load("wk",{"apiHost":"api.example.com"})');
    expect(js).toContain('analytics.page()');
  });

  it('resolves svc-analytics to the npm entry with AnalyticsBrowser', async () => {
    const mod = await import('svc-analytics');
    expect(typeof mod.AnalyticsBrowser.load).toBe('function');
  });

  it('lists types first in every conditional export, and the files it names exist', () => {
    const req = createRequire(import.meta.url);
    for (const [name, target] of Object.entries<any>(pkg.exports)) {
      if (typeof target == 'string') {
        expect(() => req.resolve('svc-analytics/' + name.slice(2)), name).not.toThrow();
        continue;
      }
      expect(Object.keys(target)[0], name).toBe('types');
      for (const file of Object.values<string>(target)) expect(() => readFileSync(file), file).not.toThrow();
    }
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.type).toBe('module');
  });
});
