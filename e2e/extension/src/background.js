// The extension's service worker: the npm entry from the packed package, loaded as the worker starts (each time the
// browser wakes it). `self.trackSome(name, n)` (called by the test) tracks n events; a message wakes it.
import { AnalyticsBrowser } from 'svc-analytics';
import { apiHost } from 'virtual:config';

const analytics = AnalyticsBrowser.load({ writeKey: 'dev-write-key' }, { apiHost, flushInterval: 100 });
const errors = [];
analytics.on('error', (e) => errors.push(e.code + ': ' + e.message));
self.trackSome = async (name, n) => {
  const ids = [];
  for (let i = 0; i < n; i++) ids.push((await analytics.track(name, { i })).event.messageId);
  return ids;
};
self.errors = () => errors;
chrome.runtime.onMessage.addListener((m, _sender, reply) => {
  if (m && m.wake) analytics.ready().then(() => reply({ awake: true }));
  return true;
});
