// @vitest-environment node
import { describe, it, expect } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

// security-3 L10: the bundle knows its lazy chunk's SRI hash (built first, inlined by rollup.config.mjs), and
// dist/sri.json lists both files (after `npm run build`).
// (sha384 for the bundle, which sites pin; sha256 for the chunks, whose hashes the bundle carries: 63 B brotli fewer)
const sriOf = (file: string) => {
  const hash = file == 'analytics.min.js' ? 'sha384' : 'sha256';
  return hash + '-' + createHash(hash).update(readFileSync(`dist/${file}`)).digest('base64');
};

describe('SRI of the bundle and its lazy chunk', () => {
  it('dist/sri.json lists the bundle and the chunk with their hashes', () => {
    const sri = JSON.parse(readFileSync('dist/sri.json', 'utf8'));
    expect(sri).toEqual({
      'analytics.min.js': sriOf('analytics.min.js'),
      'analytics.debug.min.js': sriOf('analytics.debug.min.js'),
      'analytics.extend.min.js': sriOf('analytics.extend.min.js'),
      'analytics.sources.min.js': sriOf('analytics.sources.min.js'),
      'analytics.plan.min.js': sriOf('analytics.plan.min.js'),
    });
    expect(readFileSync('dist/analytics.debug.min.js.sri', 'utf8').trim()).toBe(sri['analytics.debug.min.js']);
  });
  it("the bundle carries the chunk's hash, set as the chunk's integrity (with the bundle's crossorigin)", () => {
    const js = readFileSync('dist/analytics.min.js', 'utf8');
    expect(js).not.toContain('__CHUNK_SRI__');
    // (one loader for every chunk: the hash is its argument, set as the script's integrity)
    expect(js).toMatch(/\.integrity&&\([\w$]+\.integrity=[\w$]+,[\w$]+\.crossOrigin=[\w$]+\.crossOrigin\)/);
    expect(js).toContain(`"analytics.debug.min.js","${sriOf('analytics.debug.min.js')}"`);
    expect(js).not.toContain('__EXTEND_SRI__');
    expect(js).toContain(`"analytics.extend.min.js","${sriOf('analytics.extend.min.js')}"`);
    expect(js).not.toContain('__SOURCES_SRI__');
    expect(js).toContain(`"analytics.sources.min.js","${sriOf('analytics.sources.min.js')}"`);
  });
  it("the tracking-plan chunk's hash is carried by the lazy chunk that loads it, not by the bundle (a page without a plan pays no byte)", () => {
    const debug = readFileSync('dist/analytics.debug.min.js', 'utf8');
    expect(debug).not.toContain('__PLAN_SRI__');
    expect(debug).toContain(`"analytics.plan.min.js","${sriOf('analytics.plan.min.js')}"`);
    const js = readFileSync('dist/analytics.min.js', 'utf8');
    expect(js).not.toContain('analytics.plan.min.js');
    expect(js).not.toContain(sriOf('analytics.plan.min.js'));
  });
});
