// The IIFE build of the lazy chunk (dist/analytics.debug.min.js): the debug tools, the link and server-cookie tools
// (loaded at `load` with `linkDomains` or `serverCookies`), the take-over of other pages' calls from the stub's
// buffer (loaded before `load` when the buffer holds some: src/stub/adopt.ts) and the loader of the tracking-plan chunk. The bundle
// inserts it on `debug(true)`, those options or a `plan` load option, and reads what it leaves here when it has run.
import { createDebugTools } from '../debug/debug';
import { linkTools } from '../identity/tools';
import { takeOverBuffer } from '../stub/adopt';
import type { LazyChunk } from './browser';
import type { createPlanCheck } from '../plan/browser-check';

const chunk: LazyChunk = {
  tools: createDebugTools(),
  links: linkTools,
  takeOverBuffer,
  plan: (load, plan, report) =>
    load<typeof createPlanCheck>('analytics.plan.min.js', '__PLAN_SRI__', 'svcAnalyticsPlan', (f) => typeof f == 'function').then((f) => f(plan, report)),
};
// (the page's window, with the property this chunk leaves on it)
const page: Window & { svcAnalyticsDebug?: LazyChunk } = window;
page.svcAnalyticsDebug = chunk;
