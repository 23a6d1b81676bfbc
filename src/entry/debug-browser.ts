// The IIFE build of the lazy chunk (dist/analytics.debug.min.js): the debug tools, the plugin runner, and the link and
// server-cookie tools (loaded at `load` with `linkDomains` or `serverCookies`). The bundle
// inserts it on `debug(true)` or a site's first `register(...)`, and reads what it leaves here when it has run.
import { createDebugTools } from '../debug/debug';
import { pluginRunner } from '../extend/plugins';
import { linkTools } from '../identity/tools';
import type { LazyChunk } from './browser';

const chunk: LazyChunk = { tools: createDebugTools(), plugins: pluginRunner, links: linkTools };
(window as Window & { svcAnalyticsDebug?: LazyChunk }).svcAnalyticsDebug = chunk;
