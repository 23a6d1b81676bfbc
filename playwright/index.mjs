// svc-analytics/playwright: check a site's analytics in its own Playwright tests (CONTRACT section 5).
//
// `test` is Playwright's `test` with an `analytics` fixture. For each test it starts the package's collector
// (collector/server.mjs) on a free 127.0.0.1 port and, with `context.addInitScript`, sets the library's test-only
// override `window.__svcAnalyticsTest = { apiHost }` in every page and frame of the test's browser context before
// the page's own scripts run. The library reads it once, at `load`, and sends there instead of the `apiHost` the
// page names. No Playwright route is involved, so requests sent while a page navigates away (beacons, keepalive
// fetches) and CORS preflights reach a real server, as in production.
//
// Plain ESM with a hand-written index.d.ts: no build step. `@playwright/test` is an optional peer dependency.
import path from 'node:path';
import { test as base, expect as baseExpect } from '@playwright/test';
import { startCollector } from '../collector/server.mjs';

/** The global the library reads once at load (src/api/analytics.ts). */
const OVERRIDE = '__svcAnalyticsTest';
/** Where a handle keeps what the matchers need; not part of the API. */
const INTERNAL = Symbol.for('svc-analytics/playwright');

const DEFAULT_OPTIONS = { violations: true, writeKey: null };
const FILTER_VALUES = ['type', 'event', 'name', 'userId', 'anonymousId', 'groupId', 'messageId', 'previousId'];
const FILTER_OBJECTS = ['properties', 'traits', 'context'];
const MAX_LISTED = 40;

/** `analyticsPlan`: a plan object, or a file path taken from the Playwright config's directory (else the working one). */
const planSource = (plan, testInfo) =>
  typeof plan === 'string' ? path.resolve(testInfo.config.configFile ? path.dirname(testInfo.config.configFile) : process.cwd(), plan) : plan;

/** The after-test check's lines: requests a correct client never sends, then messages off the tracking plan. */
function violationLines(violations) {
  return violations.map((r) =>
    r.kind === 'plan'
      ? `  off the tracking plan: ${r.violation.reason}`
      : `  ${r.method} ${r.path} answered ${r.status}: ${r.violation.kind}: ${r.violation.reason}`,
  );
}

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !isAsymmetric(v);
const isAsymmetric = (v) => v !== null && typeof v === 'object' && typeof v.asymmetricMatch === 'function';

/** Exact deep equality of JSON values; asymmetric matchers (`expect.any(String)`, ...) anywhere in `expected`. */
function equals(expected, actual) {
  if (isAsymmetric(expected)) return !!expected.asymmetricMatch(actual);
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => equals(e, actual[i]));
  }
  if (isPlainObject(expected)) {
    if (!isPlainObject(actual)) return false;
    const keys = Object.keys(expected).filter((k) => expected[k] !== undefined);
    const actualKeys = Object.keys(actual).filter((k) => actual[k] !== undefined);
    return keys.length === actualKeys.length && keys.every((k) => Object.hasOwn(actual, k) && equals(expected[k], actual[k]));
  }
  return expected === actual || (Number.isNaN(expected) && Number.isNaN(actual));
}

/** Partial match: every key of an expected object, deeply; arrays and everything else exactly (see `equals`). */
function contains(expected, actual) {
  if (isPlainObject(expected)) {
    return isPlainObject(actual) && Object.keys(expected).every((k) =>
      expected[k] === undefined ? actual[k] === undefined : Object.hasOwn(actual, k) && contains(expected[k], actual[k]));
  }
  return equals(expected, actual);
}

/** Checks a filter's keys once, so that a typo (`{ path: '/x' }`) is an error rather than a filter that matches everything. */
function checkFilter(filter) {
  if (filter === undefined || filter === null) return {};
  if (!isPlainObject(filter)) throw new TypeError('svc-analytics/playwright: a message filter is an object such as { type: "track", event: "Signed Up" }');
  for (const key of Object.keys(filter)) {
    if (!FILTER_VALUES.includes(key) && !FILTER_OBJECTS.includes(key)) {
      throw new TypeError(`svc-analytics/playwright: unknown filter key "${key}" (known: ${[...FILTER_VALUES, ...FILTER_OBJECTS].join(', ')}; a page's path is { properties: { path } })`);
    }
  }
  return filter;
}

function matches(message, filter) {
  for (const key of FILTER_VALUES) if (filter[key] !== undefined && !equals(filter[key], message[key])) return false;
  for (const key of FILTER_OBJECTS) if (filter[key] !== undefined && !contains(filter[key], message[key])) return false;
  return true;
}

/** A message as tests see it: a copy, without the collector's bookkeeping fields. */
function published(message) {
  const { _requestId, _receivedAt, ...rest } = message;
  return structuredClone(rest);
}

/** Resolves on the collector's next change, or after `ms`, whichever comes first. */
function nextChange(collector, ms) {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      off();
      resolve();
    };
    const timer = setTimeout(done, Math.min(Math.max(0, ms), 2 ** 31 - 1)); // (no timeout: until a change)
    const off = collector.onChange(done);
  });
}

/**
 * Asks the library on every page (and frame) of the contexts to flush, and waits for that, bounded by `ms`. Pages
 * without the library, with only its stub (the bundle has not arrived), closed or navigating are passed over.
 */
async function flushPages(contexts, ms) {
  const frames = contexts.flatMap((c) => c.pages()).filter((p) => !p.isClosed()).flatMap((p) => p.frames());
  const flushes = frames.map((frame) =>
    frame
      .evaluate(async () => {
        // The snippet's instance, and every instance the library registered with the kit (an npm app's own).
        const all = new Set([window.analytics, ...((window.__svcAnalyticsTest && window.__svcAnalyticsTest.instances) || [])]);
        for (const a of all) if (a && a.initialized === true && typeof a.flush === 'function') await a.flush();
      })
      .catch(() => {}),
  );
  let timer;
  await Promise.race([Promise.all(flushes), new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))))]);
  clearTimeout(timer);
}

/** The handle tests get as `analytics`. */
function createHandle(collector, contexts) {
  // What clear() forgot: kept for the report and the after-test violations check.
  const forgotten = { messages: [], violations: [] };
  const handle = {
    url: collector.url,
    messages(filter) {
      const f = checkFilter(filter);
      return collector.state.messages.filter((m) => matches(m, f)).map(published);
    },
    clear() {
      forgotten.messages.push(...collector.state.messages);
      forgotten.violations.push(...collector.violations());
      collector.clear();
    },
    failNext(count, status, headers) {
      if (!Number.isInteger(count) || count < 1) throw new TypeError('svc-analytics/playwright: failNext(count, status): count is a positive integer');
      if (!Number.isInteger(status) || status < 400 || status > 599) throw new TypeError('svc-analytics/playwright: failNext(count, status): status is an error status, 400-599');
      collector.setFault({ status, times: count, headers: headers ?? null });
    },
    violations() {
      return structuredClone([...forgotten.violations, ...collector.violations()]);
    },
    requests() {
      return structuredClone(collector.state.requests);
    },
    flush(timeoutMs = 10000) {
      return flushPages(contexts, timeoutMs);
    },
  };
  Object.defineProperty(handle, INTERNAL, {
    value: {
      collector,
      contexts,
      everything: () => [...forgotten.messages, ...collector.state.messages].map(published),
      allViolations: () => [...forgotten.violations, ...collector.violations()],
    },
  });
  return handle;
}

export const test = base.extend({
  analyticsOptions: [{}, { option: true }],
  // A tracking plan (CONTRACT section 7): its violations count as violations (the after-test check fails the test).
  analyticsPlan: [undefined, { option: true }],

  // One collector per test, for every page of the test's context whether or not the test asks for `analytics`:
  // pages under test never send to the production host they name.
  _svcAnalytics: [
    async ({ analyticsOptions, analyticsPlan }, use, testInfo) => {
      const options = { ...DEFAULT_OPTIONS, ...analyticsOptions };
      const plan = analyticsPlan == null ? null : planSource(analyticsPlan, testInfo);
      const collector = await startCollector({ port: 0, host: '127.0.0.1', writeKey: options.writeKey ?? null, quiet: true, plan }).catch((err) => {
        throw new Error(`svc-analytics/playwright: analyticsPlan: ${err.message}`);
      });
      const contexts = [];
      const handle = createHandle(collector, contexts);
      let violations = [];
      try {
        await use({ collector, contexts, handle });
      } finally {
        const internal = handle[INTERNAL];
        violations = internal.allViolations();
        await testInfo.attach('analytics messages', {
          body: JSON.stringify(internal.everything(), null, 2),
          contentType: 'application/json',
        });
        if (violations.length) {
          await testInfo.attach('analytics violations', { body: JSON.stringify(violations, null, 2), contentType: 'application/json' });
        }
        await collector.close();
      }
      if (options.violations && violations.length) {
        const lines = violationLines(violations.slice(0, 10));
        if (violations.length > 10) lines.push(`  ... and ${violations.length - 10} more (see the "analytics violations" attachment)`);
        const requests = violations.filter((r) => r.kind !== 'plan').length;
        const offPlan = violations.length - requests;
        const what = [
          requests && `${requests} request(s) a correct client never sends (over a size limit, a missing or wrong write key, malformed)`,
          offPlan && `${offPlan} message(s) that do not follow the tracking plan`,
        ].filter(Boolean);
        throw new Error(
          `svc-analytics/playwright: the collector received ${what.join(', and ')}:\n${lines.join('\n')}\n` +
            'Turn this check off with test.use({ analyticsOptions: { violations: false } }).',
        );
      }
    },
    { box: true },
  ],

  context: async ({ context, _svcAnalytics }, use) => {
    // Runs before any script of every page, popup and frame of the context, on every navigation and reload.
    await context.addInitScript(
      ({ name, apiHost }) => {
        window[name] = { apiHost };
      },
      { name: OVERRIDE, apiHost: _svcAnalytics.collector.url },
    );
    _svcAnalytics.contexts.push(context);
    await use(context);
  },

  analytics: async ({ _svcAnalytics, context }, use) => {
    void context; // asked for so that the override is in place before the test's first page loads
    await use(_svcAnalytics.handle);
  },
});

// ---- matchers ----

const short = (value, max = 160) => {
  const text = value === undefined ? '' : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
};

/** One line for a received message: its type, what names it, and its properties or traits. */
function describeMessage(m) {
  switch (m.type) {
    case 'track': return `track ${JSON.stringify(m.event)} ${short(m.properties)}`;
    case 'page': return `page ${JSON.stringify(m.properties?.path)}${m.name ? ` name ${JSON.stringify(m.name)}` : ''} ${short(m.properties && m.properties.title !== undefined ? { title: m.properties.title } : undefined)}`.trimEnd();
    case 'screen': return `screen ${JSON.stringify(m.name)} ${short(m.properties)}`;
    case 'identify': return `identify ${JSON.stringify(m.userId ?? null)} ${short(m.traits)}`;
    case 'group': return `group ${JSON.stringify(m.groupId)} ${short(m.traits)}`;
    case 'alias': return `alias ${JSON.stringify(m.userId)} from ${JSON.stringify(m.previousId)}`;
    default: return short(m);
  }
}

/** Where `actual` differs from what `contains(expected, actual)` wants: lines such as `properties.total: expected 10, received 12`. */
function differences(expected, actual, path, out, limit = 5) {
  if (out.length >= limit) return out;
  if (isPlainObject(expected) && isPlainObject(actual)) {
    for (const k of Object.keys(expected)) {
      if (expected[k] === undefined && actual[k] !== undefined) out.push(`${path}.${k}: expected no value, received ${short(actual[k], 60)}`);
      else if (expected[k] !== undefined && !Object.hasOwn(actual, k)) out.push(`${path}.${k}: expected ${show(expected[k])}, received nothing`);
      else if (expected[k] !== undefined) differences(expected[k], actual[k], `${path}.${k}`, out, limit);
      if (out.length >= limit) break;
    }
  } else if (!contains(expected, actual)) {
    out.push(`${path}: expected ${show(expected)}, received ${actual === undefined ? 'nothing' : short(actual, 100)}`);
  }
  return out;
}

const show = (v) => (isAsymmetric(v) ? String(v.toString?.() ?? 'a matcher') : short(v, 100));

/**
 * A matcher over the analytics fixture. `spec(...args)` gives the filter and how to say what was expected; `key`
 * names the field that, when it matches, makes a message a near miss worth explaining (the event of a track, ...).
 */
function matcher(name, spec) {
  return async function (receiver, ...args) {
    const internal = receiver && receiver[INTERNAL];
    if (!internal) {
      throw new Error(`expect(analytics).${name}(): pass the \`analytics\` fixture of svc-analytics/playwright, not ${receiver === null ? 'null' : typeof receiver}`);
    }
    const { collector, contexts } = internal;
    const { filter, expected, near } = spec(...args);
    const find = () => collector.state.messages.filter((m) => matches(m, filter));
    // (0, as Playwright reads it: no timeout; the flush before a `.not` check still ends, after 10 s)
    const timeout = this.timeout || (this.timeout === 0 ? Infinity : 5000);
    let found = find();
    let timedOut = false;
    if (this.isNot) {
      // Anything a page still holds must have had its chance to arrive before "not received" means anything.
      await flushPages(contexts, Math.min(timeout, 10000));
      found = find();
    } else {
      const deadline = Date.now() + timeout;
      while (!found.length && Date.now() < deadline) {
        await nextChange(collector, deadline - Date.now());
        found = find();
      }
      timedOut = !found.length;
    }
    const pass = found.length > 0;
    const message = () => {
      const all = collector.state.messages;
      const hint = this.utils.matcherHint(name, 'analytics', 'expected', { isNot: this.isNot, promise: this.promise });
      const lines = [`${hint} failed`, ''];
      lines.push(`Expected: ${this.isNot ? 'no ' : ''}${expected}`);
      if (this.isNot) {
        lines.push(`Received: ${found.length} matching message(s) of ${all.length}:`);
        for (const m of found.slice(0, MAX_LISTED)) lines.push(`  ${all.indexOf(m) + 1}. ${describeMessage(m)}`);
      } else if (!all.length) {
        const requests = collector.state.requests.length;
        lines.push(`Received: no message at all (${requests} request(s) reached the kit's collector at ${collector.url})`);
        if (!requests) {
          lines.push('  Does the page load the library (the snippet and its bundle, or the npm entry), and was its load()');
          lines.push('  called after the test asked for the `page`/`context` of svc-analytics/playwright\'s `test`?');
        }
      } else {
        lines.push(`Received: ${all.length} message(s), none of them that one:`);
        all.slice(0, MAX_LISTED).forEach((m, i) => {
          lines.push(`  ${i + 1}. ${describeMessage(m)}`);
          if (near && near(m)) for (const d of near(m)) lines.push(`       ${d}`);
        });
        if (all.length > MAX_LISTED) lines.push(`  ... and ${all.length - MAX_LISTED} more (see analytics.messages() and the "analytics messages" attachment)`);
      }
      const violations = internal.allViolations();
      if (violations.length) {
        lines.push(`Note: ${violations.length} request(s) were refused as violations, so their messages were not received:`);
        for (const r of violations.slice(0, 3)) lines.push(r.kind === 'plan' ? `  off the plan (received): ${r.violation.reason}` : `  ${r.method} ${r.path} ${r.status}: ${r.violation.reason}`);
      }
      const failed = collector.state.requests.filter((r) => r.fault === 'status').length;
      if (failed && !this.isNot) lines.push(`Note: ${failed} request(s) were answered with an error by failNext; their messages count once a retry is accepted.`);
      if (timedOut) lines.push(`Timeout: ${timeout}ms`);
      return lines.join('\n');
    };
    return { pass, name, message, expected, actual: found.map(published), timeout: timedOut ? timeout : undefined };
  };
}

const jsonish = (v) => (isAsymmetric(v) ? show(v) : JSON.stringify(v));
const traitsFirst = (id, traits) => (isPlainObject(id) ? [undefined, id] : [id, traits]);

/** Near-miss explanation: for messages of `type` whose `key` matches, what differs in `field`. */
const nearMiss = (type, key, keyValue, field, partial) => (m) => {
  if (m.type !== type || partial === undefined) return null;
  if (key && keyValue !== undefined && !equals(keyValue, m[key])) return null;
  return differences(partial, m[field], field, []);
};

export const expect = baseExpect.extend({
  toHaveTracked: matcher('toHaveTracked', (event, properties) => {
    if (!(typeof event === 'string' && event) && !isAsymmetric(event)) {
      throw new TypeError('toHaveTracked(event, properties?): event is the track\'s event name, a non-empty string');
    }
    return {
      filter: { type: 'track', event, ...(properties !== undefined && { properties }) },
      expected: `track ${jsonish(event)}${properties !== undefined ? ` with properties ${jsonish(properties)}` : ''}`,
      near: nearMiss('track', 'event', event, 'properties', properties),
    };
  }),
  toHavePaged: matcher('toHavePaged', (pathOrProperties) => {
    const properties = typeof pathOrProperties === 'string' || isAsymmetric(pathOrProperties) ? { path: pathOrProperties } : pathOrProperties;
    if (properties !== undefined && !isPlainObject(properties)) {
      throw new TypeError('toHavePaged(pathOrProperties?): a path such as "/cart" or an object of properties');
    }
    return {
      filter: { type: 'page', ...(properties !== undefined && { properties }) },
      expected: properties === undefined ? 'a page view' : `page with properties ${jsonish(properties)}`,
      near: nearMiss('page', null, undefined, 'properties', properties),
    };
  }),
  toHaveIdentified: matcher('toHaveIdentified', (userIdOrTraits, maybeTraits) => {
    const [userId, traits] = traitsFirst(userIdOrTraits, maybeTraits);
    return {
      filter: { type: 'identify', ...(userId !== undefined && { userId }), ...(traits !== undefined && { traits }) },
      expected: `identify${userId !== undefined ? ` of user ${jsonish(userId)}` : ''}${traits !== undefined ? ` with traits ${jsonish(traits)}` : ''}`,
      near: nearMiss('identify', 'userId', userId, 'traits', traits),
    };
  }),
  toHaveGrouped: matcher('toHaveGrouped', (groupIdOrTraits, maybeTraits) => {
    const [groupId, traits] = traitsFirst(groupIdOrTraits, maybeTraits);
    return {
      filter: { type: 'group', ...(groupId !== undefined && { groupId }), ...(traits !== undefined && { traits }) },
      expected: `group${groupId !== undefined ? ` ${jsonish(groupId)}` : ''}${traits !== undefined ? ` with traits ${jsonish(traits)}` : ''}`,
      near: nearMiss('group', 'groupId', groupId, 'traits', traits),
    };
  }),
});
