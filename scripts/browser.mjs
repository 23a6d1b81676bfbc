#!/usr/bin/env node
// Makes sure the e2e tests have a Chromium: CHROMIUM_PATH, Debian's /usr/bin/chromium, or Playwright's own.
// On a Debian machine where we are root and none is there, installs Debian's chromium (Playwright cannot
// download its browsers on machines without internet); elsewhere Playwright's own (npx playwright install chromium).
import { existsSync } from 'node:fs';
import { execSync } from 'node:child_process';
import { chromium } from '@playwright/test';

const has = (p) => p && existsSync(p);
const own = (() => {
  try {
    return chromium.executablePath();
  } catch {
    return '';
  }
})();
if (has(process.env.CHROMIUM_PATH) || has('/usr/bin/chromium') || has(own)) process.exit(0);
if (process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')) {
  console.log('e2e: no Chromium found; installing Debian chromium (apt-get)...');
  execSync('apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null', { stdio: 'inherit' });
  process.exit(0);
}
// Elsewhere (macOS, Windows, another Linux, not root): Playwright's own, downloaded as `npm install` downloaded the rest.
try {
  console.log('e2e: no Chromium found; installing Playwright\'s (npx playwright install chromium)...');
  execSync('npx playwright install chromium', { stdio: 'inherit' });
  if (has(chromium.executablePath())) process.exit(0);
} catch {
  // no download (no internet): said below
}
console.error('e2e: no Chromium found, and none could be installed. Install one: `npx playwright install chromium`, or set CHROMIUM_PATH to a Chromium binary.');
process.exit(1);
