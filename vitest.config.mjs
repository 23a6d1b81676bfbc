import { defineConfig } from 'vitest/config';

export default defineConfig({
  define: { __VERSION__: '"0.0.0-test"', __CDN_URL__: '"https://cdn.test/analytics.min.js"' },
  test: {
    environment: 'happy-dom',
    include: ['test/**/*.test.ts'],
    testTimeout: 10000,
  },
});
