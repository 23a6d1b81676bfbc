import type { CoreAnalytics, HelperDeps } from '../api/types';
import type { EcommerceHelpers } from './ecommerce';
import type { SemanticHelpers } from './semantic';
import { createEcommerce } from './ecommerce';
import { createSemantic } from './semantic';

/** The public API (CONTRACT section 2): the core and the helper namespaces (src/helpers/). */
export interface Analytics extends CoreAnalytics {
  /** One helper per ecommerce event of spec 000 section 2.7. */
  ecommerce: EcommerceHelpers;
  /** The semantic events of spec 000 section 2.6 a browser sends. */
  semantic: SemanticHelpers;
}

/**
 * Gives an instance its helper namespaces, `ecommerce` (CONTRACT section 2) and `semantic`, once. The bundle and the
 * `svc-analytics` entry call it; `svc-analytics/core` does not, so an app that imports only the core carries neither
 * table (e2e/npm-apps.spec.ts builds both kinds of app from the packed package).
 */
export function addHelpers(api: CoreAnalytics & Partial<Helpers>, deps: HelperDeps): Analytics {
  return Object.assign(api, { ecommerce: api.ecommerce || createEcommerce(deps), semantic: api.semantic || createSemantic(deps) });
}

type Helpers = Omit<Analytics, keyof CoreAnalytics>;
