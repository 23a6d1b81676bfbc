// Vitest config for mutation testing (`npm run mutate`, stryker.config.mjs): only the fast unit tests of
// src/delivery. The simulator's tests (test/sim/) are too slow to run per mutant; they stay in the normal suite.
// (not mergeConfig: it would append to the base config's `include`, and run the whole suite per mutant)
import { defineConfig } from 'vitest/config';
import base from './vitest.config.mjs';

export default defineConfig({
  define: base.define,
  test: { ...base.test, include: ['test/delivery/**/*.test.ts'] },
});
