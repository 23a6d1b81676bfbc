// The one place that says which Chromium the tests, the benchmark and the screenshots launch, and how.
import { existsSync } from 'node:fs';

/** CHROMIUM_PATH, else Debian's /usr/bin/chromium, else undefined (Playwright's own browser). */
export const executablePath = process.env.CHROMIUM_PATH || (existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : undefined);

/** Flags for a sandbox without internet: no Google services, no background traffic. */
export const args = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
