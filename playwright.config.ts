import { defineConfig, devices } from '@playwright/test';
// A system Chromium when there is one (CHROMIUM_PATH, then Debian's /usr/bin/chromium), else Playwright's own.
import { executablePath, args } from './scripts/chromium.mjs';

export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 2,
  retries: 0,
  forbidOnly: true, // a stray test.only must fail the run, not shrink it
  reporter: [['list']],
  use: {
    ...devices['Desktop Chrome'],
    launchOptions: {
      executablePath,
      args,
    },
  },
});
