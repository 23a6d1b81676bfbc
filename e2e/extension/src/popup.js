// The extension's popup: the npm entry from the packed package; tracks that it opened.
import { AnalyticsBrowser } from 'svc-analytics';
import { apiHost } from 'virtual:config';

const analytics = AnalyticsBrowser.load({ writeKey: 'dev-write-key' }, { apiHost, flushInterval: 100 });
window.opened = analytics.track('Popup Opened').then((r) => r.event.messageId);
