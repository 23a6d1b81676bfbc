// A shared worker's app (e2e/contract-audit.spec.ts): the npm entry, bundled as a site's bundler would. Each page that
// connects posts { api, name, n } on its port; the worker (one library for every page) tracks n events and a page()
// call and answers on that port with their messages, its start mark, every 'error' the library reported, and the anonymous id.
import { AnalyticsBrowser } from '../../dist/index.mjs';

let analytics;
const errors = [];
// (this worker's start: a page tells a new shared worker from the one it found)
const started = Math.random();
self.onconnect = (c) => {
  const port = c.ports[0];
  port.onmessage = async (e) => {
    const { api, name, n } = e.data;
    try {
      if (!analytics) {
        analytics = AnalyticsBrowser.load({ writeKey: 'dev-write-key' }, { apiHost: api, flushInterval: 100 });
        analytics.on('error', (err) => errors.push(err.code + ': ' + err.message));
      }
      const events = [];
      for (let i = 0; i < n; i++) events.push((await analytics.track(name, { i })).event);
      events.push((await analytics.page('Shared Worker View')).event);
      await analytics.flush?.();
      port.postMessage({ events, errors, started, anonymousId: analytics.user().anonymousId() });
    } catch (err) {
      port.postMessage({ error: String((err && err.stack) || err), errors });
    }
  };
};
