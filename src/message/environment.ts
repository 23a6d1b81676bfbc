import type { Environment } from './context';
import { hasDocument } from '../offline/scope';

/** Reads the browser facts that go into every message's context (once, at load; CONTRACT section 4 lists them). */
export function readEnvironment(): Environment {
  const n = navigator;
  const env: Environment = {
    userAgent: n.userAgent || '',
    locale: n.language || '',
    // (no screen in a worker)
    screen: !hasDocument() ? undefined : { width: screen.width, height: screen.height, density: devicePixelRatio || 1 },
  };
  try {
    // Temporal's answer costs about a millisecond; the page's first Intl.DateTimeFormat (the fallback, where there is
    // no Temporal) costs 30-80 ms of main thread in Chromium 156 at 4x CPU (CDP throttling), all of it before the
    // first event could leave (https://tc39.es/proposal-temporal/#sec-temporal.now.timezoneid).
    const temporal = typeof Temporal == 'undefined' ? undefined : Temporal;
    env.timezone = (temporal && temporal.Now.timeZoneId()) || Intl.DateTimeFormat().resolvedOptions().timeZone;
  } catch {
    // very old engines: no timezone
  }
  return env;
}
