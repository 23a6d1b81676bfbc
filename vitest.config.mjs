import { defineConfig } from 'vitest/config';

export default defineConfig({
  define: { __VERSION__: '"0.0.0-test"', __CDN_URL__: '"https://cdn.test/analytics.min.js"', __BUFFER_KEY__: '"svc_buffer"' },
  test: {
    environment: 'happy-dom',
    include: ['test/**/*.test.ts'],
    testTimeout: 10000,
  },
});
