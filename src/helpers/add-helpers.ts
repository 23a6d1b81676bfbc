import type { Analytics, CoreAnalytics, HelperDeps } from '../api/analytics';
import { createEcommerce } from './ecommerce';
import { createSemantic } from './semantic';

/**
 * Gives an instance its helper namespaces, `ecommerce` (CONTRACT section 2) and `semantic`, once. The bundle and the
 * `svc-analytics` entry call it; `svc-analytics/core` does not, so an app that imports only the core carries neither
 * table (e2e/npm-apps.spec.ts builds both kinds of app from the packed package).
 */
export function addHelpers(api: CoreAnalytics, deps: HelperDeps): Analytics {
  const full = api as Analytics;
  if (!full.ecommerce) {
    full.ecommerce = createEcommerce(deps);
    full.semantic = createSemantic(deps);
  }
  return full;
}
