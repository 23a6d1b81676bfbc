import type { AnalyticsError } from '../message/errors';
import type { Callback } from '../types';
import type { DebugMode } from '../debug/debug-mode';
import { analyticsError, createEpisodes, describe } from '../message/errors';
import { createEmitter, createGuard as guardCalls } from './emitter';

/** A promise the page may ignore: a rejection it never looks at is no unhandled rejection (`await` still throws). */
export const handled = <T>(p: Promise<T>) => (p.catch(() => {}), p);

/**
 * The one guard at the page boundary (CONTRACT section 2, STYLE practices 8 and 15): the page's functions are called
 * through `safely` (what they throw becomes a `callback_error`), errors are said through the `'error'` event, and a
 * refused call takes the one refusal path, `refuse`.
 */
export function createPageGuard(debugMode: DebugMode) {
  // A function of the page that throws is reported as an `'error'` (a throwing `'error'` handler only in debug mode).
  const pageThrew = (e: unknown, name?: string) => {
    const error = analyticsError('callback_error', `a callback or handler of the page threw: ${describe(e)}`);
    name == 'error' ? debugMode.use((tools) => tools.log('error', [error])) : report(error);
  };
  const emitter = createEmitter(pageThrew, (name, args) => debugMode.use((tools) => tools.log(name, args)));
  const safely = guardCalls(pageThrew);
  const report = (e: AnalyticsError) => emitter.emit('error', e);
  return {
    emitter,
    report,
    safely,
    /**
     * A refused call: `error` is reported (unless `quiet`: what the visitor asked for, an opt-out, is no error of the
     * site's), given to the callback, and the call's promise rejects with it (a rejection the page may ignore).
     */
    refuse(error: AnalyticsError, callback?: Callback, quiet?: boolean): Promise<never> {
      if (!quiet) report(error);
      safely(callback, error);
      return handled(Promise.reject(error));
    },
    /** Calls refused while the queue is full: reported once per episode, with all their ids. */
    full: createEpisodes('queue_full', (n) => `${n} call(s) refused: the queue is full`, report),
  };
}

export type PageGuard = ReturnType<typeof createPageGuard>;
