// Checked by `tsc` (npm run typecheck), never run: every `@ts-expect-error` line must be a type error, every other
// line must compile. The core calls in their analytics.js shapes, the typed events, and window.analytics.
import type { Analytics } from '../../src/helpers/add-helpers';
import type { AnalyticsError } from '../../src/message/errors';
import type { CallResult } from '../../src/types';
import '../../src/entry/global';

declare const analytics: Analytics;
const cb = (r: CallResult | AnalyticsError) => void r;

// Every analytics.js shape compiles.
analytics.track('Clicked');
analytics.track('Clicked', { plan: 'pro', n: 1, nested: { a: [1] } });
analytics.track('Clicked', { plan: 'pro' }, { timestamp: new Date(), integrations: { All: true } }, cb);
analytics.track('Clicked', { plan: 'pro' }, cb);
analytics.track('Clicked', cb);
analytics.identify('u1');
analytics.identify('u1', { email: 'a@b.c' });
analytics.identify('u1', { email: 'a@b.c' }, { context: { ip: '0.0.0.0' } }, cb);
analytics.identify({ email: 'a@b.c' });
analytics.identify({ email: 'a@b.c' }, cb);
analytics.identify(null, { email: 'a@b.c' });
analytics.page();
analytics.page('Docs');
analytics.page('Docs', { section: 'api' });
analytics.page('Guides', 'Docs', { section: 'api' }, {}, cb);
analytics.page({ title: 'Home' });
analytics.page(cb);
analytics.screen('Home');
analytics.group('g1', { plan: 'pro' }, { objectTypeId: '2' });
analytics.alias('u2', 'u1');
analytics.alias('u2');
const id: string | null = analytics.group().id();
void id;
const done: Promise<CallResult> = analytics.track('X');
void done;
window.analytics.track('From the snippet');

// Typed events: the handler's arguments follow the event.
analytics.on('track', (event, properties, result) => void [event.toUpperCase(), properties.x, result.event.messageId]);
analytics.on('error', (e) => void e.code);
analytics.on('delivered', (messages) => void messages.map((m) => m.messageId));
analytics.once('retry', ({ status, delay, messageIds }) => void [status + delay, messageIds.length]);
analytics.on('ready', () => {}).on('reset', () => {});

// Wrong shapes are errors.
// @ts-expect-error track needs an event name
analytics.track();
// @ts-expect-error an event name is a string
analytics.track(42);
// @ts-expect-error properties are an object
analytics.track('X', 'not properties');
// @ts-expect-error options are an object
analytics.track('X', {}, 'not options');
// @ts-expect-error integrations map names to true or false (the API refuses anything else)
analytics.track('X', {}, { integrations: { Amplitude: { session_id: 1 } } });
// group(traits): the stored group's (analytics.js); group(null, traits) too
analytics.group({ plan: 'pro' });
analytics.group(null, { plan: 'pro' }, { context: {} });
// @ts-expect-error a groupId is a string
analytics.group(42, { plan: 'pro' });
// @ts-expect-error alias needs a userId
analytics.alias();
// @ts-expect-error no such event
analytics.on('clicked', () => {});
// @ts-expect-error an error handler gets an AnalyticsError, not a string
analytics.on('error', (e: string) => void e);
// @ts-expect-error a track handler's first argument is the event name (a string)
analytics.on('track', (event: number) => void event);

// svc-analytics/core: the same API without the helper namespaces; chaining keeps the type it was called on.
import type { CoreAnalytics } from '../../src/api/types';
declare const core: CoreAnalytics;
core.track('Clicked', { plan: 'pro' }).then((r) => void r.event.messageId);
core.on('track', () => {}).debug(false).track('Chained');
// @ts-expect-error the core has no ecommerce helpers
core.ecommerce.orderCompleted({ order_id: 'o1' });
// @ts-expect-error nor semantic ones, even after a chained call
core.on('ready', () => {}).semantic.userDeleted();
analytics.on('ready', () => {}).ecommerce.orderCompleted({ order_id: 'o1' });
const widened: CoreAnalytics = analytics;
void widened;
