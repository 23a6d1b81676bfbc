// The test site's own service worker (e2e/service-worker.spec.ts): svc-analytics/service-worker as one classic
// script from the site's origin, and the site's own lines (it takes over at once, as many PWAs do).
importScripts('/dist/service-worker.js');
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
