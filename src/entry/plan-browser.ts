// The IIFE build of the tracking-plan chunk (dist/analytics.plan.min.js): the bundle inserts it when `load` has a
// `plan` option, and reads the factory it leaves here when it has run.
import { createPlanCheck } from '../plan/browser-check';

(window as unknown as { svcAnalyticsPlan: typeof createPlanCheck }).svcAnalyticsPlan = createPlanCheck;
