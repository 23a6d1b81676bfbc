// `svc-analytics/plan` (dist/plan.mjs): the tracking-plan checker for Node: the collector's `--plan`, the testing
// kit's `analyticsPlan` and `svc-analytics plan check` use it, so every place checks a plan the same way.
export { compilePlan, validatePlan, describeViolation, PlanError } from '../plan/plan';
export type { CompiledPlan, TrackingPlanFile, PlanViolation } from '../plan/plan';
import { ECOMMERCE_EVENTS } from '../helpers/ecommerce';
import { SEMANTIC_EVENTS } from '../helpers/semantic';

/** The spec's ecommerce and semantic event names: a plan needs no entry for them (CONTRACT section 7). */
export const SPEC_EVENTS: string[] = [...ECOMMERCE_EVENTS, ...SEMANTIC_EVENTS];
