// A dedicated worker's app (e2e/worker.spec.ts, e2e/engines/worker.spec.ts): the npm entry, bundled as a site's
// bundler would (e2e/worker/build.ts). The page posts { api, name, n }; the worker tracks n events and answers with
// their ids, the context of the first, and every 'error' the library reported.
import { AnalyticsBrowser } from '../../dist/index.mjs';

let analytics;
const errors = [];
self.onmessage = async (e) => {
  const { api, name, n } = e.data;
  try {
    if (!analytics) {
      analytics = AnalyticsBrowser.load({ writeKey: 'dev-write-key' }, { apiHost: api, flushInterval: 100 });
      analytics.on('error', (err) => errors.push(err.code + ': ' + err.message));
    }
    const ids = [];
    let context;
    for (let i = 0; i < n; i++) {
      const r = await analytics.track(name, { i });
      ids.push(r.event.messageId);
      context ||= r.event.context;
    }
    await analytics.flush?.();
    postMessage({ ids, context, errors, anonymousId: analytics.user().anonymousId() });
  } catch (err) {
    postMessage({ error: String((err && err.stack) || err), errors });
  }
};
