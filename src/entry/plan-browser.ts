// The IIFE build of the tracking-plan chunk (dist/analytics.plan.min.js): the bundle inserts it when `load` has a
// `plan` option, and reads the factory it leaves here when it has run.
import { createPlanCheck } from '../plan/browser-check';

// (the page's window, with the property this chunk leaves on it)
const page: Window & { svcAnalyticsPlan?: typeof createPlanCheck } = window;
page.svcAnalyticsPlan = createPlanCheck;
