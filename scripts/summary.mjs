#!/usr/bin/env node
// Reads the log of `npm test` (vitest, then Playwright) on stdin and prints one closing line:
// "Tests: N passed, N failed" (unit and end-to-end together).
import { readFileSync } from 'node:fs';

const log = readFileSync(0, 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
const sum = (text, re) => [...text.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
// vitest closes with "Tests  3 failed | 377 passed (380)"
const unit = [...log.matchAll(/^\s*Tests\s+(.*)$/gm)].map((m) => m[1]).join('\n');
// Playwright closes with "  63 passed (56.2s)" and, when any, "  2 failed" / "  1 flaky" lines
const e2e = log.split(/^\s*Running \d+ tests? using/m).slice(1).join('\n');
const passed = sum(unit, /(\d+) passed/g) + sum(e2e, /^\s+(\d+) passed \(/gm);
const failed = sum(unit, /(\d+) failed/g) + sum(e2e, /^\s+(\d+) (?:failed|flaky|interrupted)$/gm);
console.log(`Tests: ${passed} passed, ${failed} failed`);
