// The demo shop's service worker: svc-analytics/service-worker, as one classic script from the shop's own origin
// (a bundled site writes `import 'svc-analytics/service-worker'` instead). Go offline, add something to the cart,
// close the tab, come back online: the browser wakes this worker with a Background Sync and the inspector receives
// the events, with the time they happened.
importScripts('/dist/service-worker.js');
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
