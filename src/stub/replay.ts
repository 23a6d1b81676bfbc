import type { MessageType } from '../message/types';
import type { CallResult } from '../types';
import type { CallSite, CoreAnalytics, RecordedPage } from '../api/types';
import { EVENT_ARGS } from '../api/calls';
import { hasOwn } from '../message/validate';

// (`hasOwn`: Object.prototype.hasOwnProperty as the bundle found it)
const own = (o: object, key: string): unknown => (hasOwn.call(o, key) ? (o as Record<string, unknown>)[key] : undefined);
const isType = (method: string): method is MessageType => hasOwn.call(EVENT_ARGS, method);

/** Runs the snippet's recorded calls: from memory (`false`), or from the stub's buffer with other pages' (`true`). */
export type Recorded = (storage: boolean) => void;

/**
 * The stub's replay: a recorded call runs with its page and time (`ecommerce.orderCompleted` style names included),
 * and the recorded calls still to take from storage wait here until storing is allowed: a `load` that fails keeps
 * them for the next one; while consent is pending this page's run from memory, and every page's from storage once
 * it is granted.
 */
export function createReplay(api: () => CoreAnalytics, invoke: (type: MessageType, args: unknown[], site: CallSite) => Promise<CallResult>) {
  let pending: Recorded | undefined;
  return {
    /** Runs a call the snippet recorded with its page and time; a call that cannot be replayed is dropped. */
    run(method: string, args: unknown[], page: RecordedPage, time: number): unknown {
      const site = { page, time };
      try {
        if (isType(method) && (args.length || method != 'group')) return invoke(method, args, site);
        if (method == 'pageview') return invoke('page', [{ path: args[0] }], site);
        const [space, name] = method.split('.');
        // (own properties only: a name read from the buffer never reaches a prototype's method)
        const target: unknown = name ? own(api(), space) : api();
        const fn: unknown = target && typeof target == 'object' ? own(target, name || space) : undefined;
        // A helper takes the call's site after its three arguments.
        if (typeof fn == 'function') return name ? fn(args[0], args[1], args[2], site) : fn.apply(api(), args);
      } catch {
        // as the page's own call would have failed
      }
    },
    /** The calls recorded before `load` (kept until a `load` succeeds). */
    keep(recorded: Recorded | undefined) {
      if (recorded) pending = recorded;
    },
    /**
     * `load` succeeded (`open`: storing is allowed) or storing opened since: the kept calls run, from storage when
     * open; else from memory, and they stay kept for the grant.
     */
    take(open: boolean) {
      const recorded = pending;
      if (open) pending = undefined;
      try {
        recorded?.(open);
      } catch {
        // each recorded call is guarded where it runs; the take-over itself never throws into the page
      }
    },
  };
}
