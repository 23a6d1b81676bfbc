import type { Environment, Hints } from './context';
import { osFromUserAgent, deviceType } from './context';
import { hasDocument } from '../offline/scope';

/** Reads the browser facts that go into every message's context (once, at load; the network type per call). */
export function readEnvironment(): Environment {
  const n = navigator;
  const ua = n.userAgent || '';
  const uad = n.userAgentData;
  const env: Environment = {
    userAgent: ua,
    locale: n.language || '',
    // (no screen in a worker)
    screen: !hasDocument() ? undefined : { width: screen.width, height: screen.height, density: devicePixelRatio || 1 },
    os: osFromUserAgent(ua, uad?.platform || undefined),
    device: { type: deviceType(ua, uad?.mobile) },
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
  if (uad && uad.brands) {
    env.userAgentData = {
      brands: uad.brands.map((b) => ({ brand: b.brand, version: b.version })),
      mobile: !!uad.mobile,
      platform: uad.platform || '',
    };
  }
  return env;
}

/** The connection type right now ('wifi', 'cellular', ...) where the browser tells it. */
export function connectionType(): string | undefined {
  return navigator.connection?.type;
}

/** Asks once for high-entropy client hints (opt-in: async and a cost); resolves to what the browser gives. */
export async function highEntropyHints(): Promise<Hints | undefined> {
  const uad = navigator.userAgentData;
  if (!uad || !uad.getHighEntropyValues) return undefined;
  try {
    const v = await uad.getHighEntropyValues(['model', 'platformVersion']);
    return { model: v.model || undefined, platformVersion: v.platformVersion || undefined };
  } catch {
    return undefined;
  }
}
