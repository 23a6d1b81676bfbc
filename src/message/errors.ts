import type { AnalyticsError, ErrorCode } from './types';

/** Builds the library's one error shape: an Error with a `code` (see `ErrorCode`) and the message ids it concerns. */
export function analyticsError(code: ErrorCode, message: string, messageIds?: string[]): AnalyticsError {
  const e = new Error(message) as AnalyticsError;
  e.name = 'AnalyticsError';
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
