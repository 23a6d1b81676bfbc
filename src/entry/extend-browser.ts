// The IIFE build of the middleware chunk (dist/analytics.extend.min.js): the stage of source middleware and plugins
// (src/extend/transforms.ts, with the check of what they pass on, src/message/check.ts) and the plugin runner. The
// bundle inserts it on the first `addSourceMiddleware` or `register` (src/extend/edge.ts stands for it until then) and
// reads what it leaves here when it has run, giving it the message code they share (`share`: src/extend/lib.ts).
import { createTransforms } from '../extend/transforms';
import { pluginRunner } from '../extend/plugins';
import type { ExtendChunk } from '../extend/edge';
import { share } from '../extend/lib';

// (the page's window, with the property this chunk leaves on it)
const page: Window & { svcAnalyticsExtend?: ExtendChunk } = window;
page.svcAnalyticsExtend = { transforms: createTransforms, plugins: pluginRunner, share };
