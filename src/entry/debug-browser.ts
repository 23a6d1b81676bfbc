// The IIFE build of the debug tools (dist/analytics.debug.min.js): the bundle inserts it on `debug(true)` and reads
// what it leaves here when it has run.
import { createDebugTools } from '../debug/debug';

(window as any).svcAnalyticsDebug = createDebugTools();
