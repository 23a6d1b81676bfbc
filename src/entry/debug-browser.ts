// The IIFE build of the lazy chunk (dist/analytics.debug.min.js): the debug tools, the plugin runner and the loader of
// the tracking-plan chunk. The bundle inserts it on `debug(true)`, a site's first `register(...)` or a `plan` load
// option, and reads what it leaves here when it has run.
import { createDebugTools } from '../debug/debug';
import { pluginRunner } from '../extend/plugins';
import type { LazyChunk } from './browser';
import type { createPlanCheck } from '../plan/browser-check';

const chunk: LazyChunk = {
  tools: createDebugTools(),
  plugins: pluginRunner,
  plan: (load, plan, report) =>
    load<typeof createPlanCheck>('analytics.plan.min.js', '__PLAN_SRI__', 'svcAnalyticsPlan', (f) => typeof f == 'function').then((f) => f(plan, report)),
};
(window as unknown as { svcAnalyticsDebug: LazyChunk }).svcAnalyticsDebug = chunk;
