// The IIFE build of the lazy chunk (dist/analytics.debug.min.js): the debug tools. The bundle inserts it on
// `debug(true)`, and reads what it leaves here when it has run.
import { createDebugTools } from '../debug/debug';
import type { LazyChunk } from './browser';

const chunk: LazyChunk = { tools: createDebugTools() };
(window as unknown as { svcAnalyticsDebug: LazyChunk }).svcAnalyticsDebug = chunk;
