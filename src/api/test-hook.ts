/** What the testing kit (svc-analytics/playwright) leaves on each page of a test: where to send, and who to flush. */
export interface TestHook {
  /** The kit's collector (a loopback URL). */
  apiHost: string;
  /** The instances of the page, which the kit flushes before a `.not` check. */
  instances: unknown[];
}

// 127.0.0.1, localhost or [::1], over http(s), any port.
const LOOPBACK = /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?(\/|$)/i;
// An own data property's value (not a getter's, nor one on a prototype).
const own = (o: unknown, key: string): unknown => (o && typeof o == 'object' ? Object.getOwnPropertyDescriptor(o, key)?.value : undefined);

/**
 * The testing kit's override (CONTRACT section 6), read when the library starts: honoured only in a browser under
 * automation (`navigator.webdriver`), only as own data properties (nothing on a prototype, no getter), and only for a
 * loopback host. Anything else is no hook: events go where the site says.
 */
export function readTestHook(): TestHook | undefined {
  try {
    const hook = navigator.webdriver === true ? own(window, '__svcAnalyticsTest') : undefined;
    const apiHost = own(hook, 'apiHost');
    if (typeof apiHost != 'string' || !LOOPBACK.test(apiHost)) return;
    const instances = own(hook, 'instances');
    return { apiHost, instances: Array.isArray(instances) ? instances : ((hook as TestHook).instances = []) };
  } catch {
    // a page that made these throw, or no window (a server): no hook
  }
}
