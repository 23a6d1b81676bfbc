// Checked by `tsc` (npm run typecheck, strict), never run: the public types users name, imported from both npm
// entries, and analytics.js's middleware examples, whose callbacks are typed from context (no implicit any).
import { AnalyticsBrowser } from '../../src/entry/index';
import type { Elements, Group, MiddlewareParams, Payload, Plugin, PluginContext, SourceMiddleware, DestinationMiddleware } from '../../src/entry/index';
import type { CoreAnalytics, Group as CoreGroup, Plugin as CorePlugin, SourceMiddleware as CoreSourceMiddleware } from '../../src/entry/core';

const analytics = AnalyticsBrowser.load({ writeKey: 'k' });

// analytics.js's own examples (https://segment.com/docs/connections/sources/catalog/libraries/website/javascript/middleware/).
analytics.addSourceMiddleware(({ payload, next, integrations }) => {
  if (payload.obj.type === 'track') payload.obj.properties = { ...payload.obj.properties, checked: true };
  void integrations;
  next(payload);
});
analytics.addDestinationMiddleware('integrationA', ({ payload, integration, next }) => {
  void integration.toUpperCase();
  next(payload);
});
analytics.addDestinationMiddleware('integrationA', ({ next, payload }) => next(payload), ({ next, payload }) => next(payload));
analytics.addIntegrationMiddleware(({ payload, next }) => next(payload));
// @ts-expect-error a destination middleware needs the destination's name first
analytics.addDestinationMiddleware(({ payload, next }: { payload: Payload; next: (p: Payload) => void }) => next(payload));

// The types by name.
const middleware: SourceMiddleware = ({ payload, next }: MiddlewareParams) => next(payload);
const destination: DestinationMiddleware = ({ payload, next }) => next(payload);
const plugin: Plugin = {
  name: 'Enrich',
  type: 'enrichment',
  version: '1.0.0',
  isLoaded: () => true,
  load: () => Promise.resolve(),
  track: (ctx: PluginContext) => (ctx.updateEvent('properties.enriched', true), ctx),
};
analytics.addSourceMiddleware(middleware).addDestinationMiddleware('x', destination);
void analytics.register(plugin).then((ctx: PluginContext) => ctx.event.messageId);
const group: Group = analytics.group();
const elements: Elements = document.querySelectorAll('a');
analytics.trackLink(elements, 'Clicked');

// svc-analytics/core names the same types.
declare const core: CoreAnalytics;
const corePlugin: CorePlugin = plugin;
const coreMiddleware: CoreSourceMiddleware = middleware;
const coreGroup: CoreGroup = core.group();
core.register(corePlugin);
core.addSourceMiddleware(coreMiddleware);
void [group, coreGroup];
