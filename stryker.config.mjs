// `npm run mutate`: StrykerJS mutation testing of src/delivery against its fast unit tests (test/delivery, through
// vitest.stryker.config.mjs). Not part of CI: a full run takes minutes; incremental reruns only test changed mutants.
// concurrency 1: the machine's cores are shared (raise it with `npm run mutate -- --concurrency 2` when alone). A full run
// takes about 19 minutes on 2 cores (1,078 mutants); test/delivery only, so start.ts (wired and tested through the
// simulator and the browser suites) scores low here.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.stryker.config.mjs' },
  mutate: ['src/delivery/**/*.ts'],
  coverageAnalysis: 'perTest',
  concurrency: 1,
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  tempDirName: '.stryker-tmp',
  reporters: ['clear-text', 'html', 'json', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 95, low: 90, break: null },
};
