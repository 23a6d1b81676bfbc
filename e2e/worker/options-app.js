// A dedicated worker's app (e2e/contract-audit.spec.ts): the npm entry loaded with the page's options of choice (what
// a site shares between its pages and its worker: trackPageViews, linkDomains, ...). It tracks one event and answers
// with its message id (after the calls named in `calls`, made with the worker's global scope as their element), every 'error' the library reported, and anything thrown (by load, or uncaught in the worker).
import { AnalyticsBrowser } from '../../dist/index.mjs';

const thrown = [];
self.addEventListener('error', (e) => thrown.push('uncaught: ' + e.message));
self.addEventListener('unhandledrejection', (e) => thrown.push('unhandled rejection: ' + String(e.reason && (e.reason.stack || e.reason))));
self.onmessage = async (e) => {
  const { api, opts, name, calls = [] } = e.data;
  const errors = [];
  let id;
  try {
    const analytics = AnalyticsBrowser.load({ writeKey: 'dev-write-key' }, { apiHost: api, flushInterval: 50, ...opts });
    analytics.on('error', (err) => errors.push(err.code + ': ' + err.message));
    // (calls about the page's elements, given what a worker has: they may be refused, never throw)
    for (const m of calls)
      try {
        const r = analytics[m](self, 'Worker ' + m);
        if (r && typeof r.then == 'function') await r.catch(() => {});
      } catch (err) {
        thrown.push(`thrown by ${m}: ${err}`);
      }
    id = (await analytics.track(name)).event.messageId;
    await analytics.flush?.();
    // (what a worker's later tasks may throw, heard before answering)
    await new Promise((r) => setTimeout(r, 200));
  } catch (err) {
    thrown.push('thrown: ' + String((err && err.stack) || err));
  }
  postMessage({ id, errors, thrown });
};
