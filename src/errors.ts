import type { AnalyticsError, ErrorCode } from './types';

/** Builds the library's one error shape: an Error with a `code` (see `ErrorCode`) and the message ids it concerns. */
export function analyticsError(code: ErrorCode, message: string, messageIds?: string[]): AnalyticsError {
  const e = new Error(message) as AnalyticsError;
  e.name = 'AnalyticsError';
  e.code = code;
  if (messageIds) e.messageIds = messageIds;
  return e;
}
