// `svc-analytics/plan` (dist/plan.mjs): the tracking-plan checker for Node: the collector's `--plan`, the testing
// kit's `analyticsPlan` and `svc-analytics plan check` use it, so every place checks a plan the same way.
export { compilePlan, validatePlan, describeViolation, PlanError } from '../plan/plan';
export type { CompiledPlan, TrackingPlanFile, PlanViolation } from '../plan/plan';
