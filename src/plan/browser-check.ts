// The tracking plan in the browser (the `plan` load option): the plan, given or fetched from the page's own origin,
// checked once, then every message the instance queues. The CDN bundle loads this as a chunk of its own
// (dist/analytics.plan.min.js); the npm entries import it on demand. A page without a plan never loads it.
import type { Message } from '../message/types';
import type { AnalyticsError } from '../message/errors';
import { analyticsError, describe } from '../message/errors';
import { compilePlan, describeViolation } from './plan';

/** Checks one queued message; reports each violation, never throws. */
export type PlanCheck = (message: Message) => void;

// A plan file of the page's own origin (a plan is no reason to read another site's files), fetched once.
async function fetchPlan(url: string): Promise<unknown> {
  const at = new URL(url, location.href);
  if (at.origin != location.origin) throw new Error(`${at.href} is not of the page's own origin (${location.origin})`);
  const response = await fetch(at.href, { credentials: 'same-origin' });
  if (!response.ok) throw new Error(`${at.href} answered ${response.status}`);
  return response.json();
}

/**
 * The checker of the `plan` load option: resolves once the plan is read and valid (rejects with why not: the caller
 * reports it once). Each violation is reported as a `plan_violation` error with the message id, the pointer and what
 * the plan expected.
 */
export async function createPlanCheck(source: unknown, report: (error: AnalyticsError) => void): Promise<PlanCheck> {
  const { check } = compilePlan(typeof source == 'string' ? await fetchPlan(source) : source);
  return (message) => {
    try {
      for (const violation of check(message)) {
        const error = analyticsError('plan_violation', describeViolation(violation), [violation.messageId]);
        error.violation = violation;
        report(error);
      }
    } catch (e) {
      // (a checker's own failure: reported, never thrown into the page)
      report(analyticsError('plan_unavailable', `plan: could not check ${message.messageId}: ${describe(e)}`));
    }
  };
}
