/** Error codes reported through `'error'`, promises and callbacks. */
export type ErrorCode =
  | 'invalid_arguments'
  | 'invalid_payload'
  | 'message_too_large'
  | 'not_loaded'
  | 'delivery_rejected'
  | 'delivery_redirected'
  | 'queue_full'
  | 'callback_error'
  | 'expired'
  | 'storage_unavailable'
  | 'dropped'
  | 'opted_out'
  | 'consent_denied'
  | 'middleware_error'
  | 'plugin_error'
  | 'plan_violation'
  | 'plan_unavailable'
  | 'chunk_unavailable';

/** An Error with a `code` from the table above; `messageIds` names the messages it concerns, if any. */
export interface AnalyticsError extends Error {
  code: ErrorCode;
  messageIds?: string[];
  /** `plan_violation` only: which message, where in it, and what the tracking plan expected. */
  violation?: PlanViolation;
}

/** A message that does not follow the tracking plan: which message, where in it (a JSON pointer), and what the plan expected. */
export interface PlanViolation {
  messageId: string;
  type: string;
  event?: string;
  /** Where in the message, as a JSON pointer: `/properties/seats`, `/event`, `/traits/email`. */
  pointer: string;
  /** What the plan expected there, and what it got: `an integer, got "3"`. */
  expected: string;
}

/** Builds the library's one error shape: an Error with a `code` (see `ErrorCode`) and the message ids it concerns. */
export function analyticsError(code: ErrorCode, message: string, messageIds?: string[]): AnalyticsError {
  const e = new Error(message) as AnalyticsError;
  // (on a page that froze Error.prototype, assigning the `name` it holds read-only throws: the error keeps `Error`)
  try {
    e.name = 'AnalyticsError';
  } catch {}
  e.code = code;
  if (messageIds) e.messageIds = messageIds;
  return e;
}

/** A rejected promise the caller may ignore without an unhandled rejection (the catch marks it handled; `await` still throws). */
export function refused<T>(e: unknown): Promise<T> {
  const p = Promise.reject(e);
  p.catch(() => {});
  return p;
}

/**
 * Reports an error once per episode (the calls refused for one reason in one task, a burst), with every id it
 * concerns, after that task.
 */
export function createEpisodes(code: ErrorCode, text: (count: number) => string, report: (e: AnalyticsError) => void) {
  let ids: string[] | undefined;
  return {
    add(messageIds: string[] = []) {
      if (!ids) {
        const episode: string[] = (ids = []);
        setTimeout(() => {
          ids = undefined;
          report(analyticsError(code, text(episode.length), episode));
        });
      }
      ids.push(...messageIds);
    },
  };
}

/** What a thrown value says, for an error's text: its `message`, or the value itself. */
export const describe = (e: unknown): string => String((e as Error)?.message || e);
