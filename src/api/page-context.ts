import type { MessageContext, PageContext } from '../message/types';
import type { Preferences } from '../privacy/consent';
import type { RecordedPage } from './types';
import { buildContext, freeze, pageContext, type Environment } from '../message/context';
import { byteLength, stringify } from '../message/validate';
import { hasDocument } from '../offline/scope';

// Document's own getters of the page facts, taken at the first call (a server has no Document): faster than
// `location.href` (which serialises the URL anew on each read) and never shadowed by an element named `URL`, `title`
// or `referrer` (DOM clobbering). (A DOM without them, such as happy-dom's, is read through `document`.)
let getters: (() => string)[] | undefined;

/** The page of a call made now: its URL, title and referrer. */
export const readPage = (): RecordedPage => {
  // (a worker has no page: its messages carry no `page` context, see message/context.ts `buildContext`)
  if (!hasDocument()) return ['', '', ''];
  const [url, title, referrer] = (getters ||= (['URL', 'title', 'referrer'] as const).map((k) => Object.getOwnPropertyDescriptor(Document.prototype, k)?.get || (() => document[k]))).map(
    (get) => get.call(document),
  );
  return [url, title, referrer];
};

/** The automatic context of a call's page, and its size. */
export interface PageFacts {
  page: PageContext;
  context: MessageContext;
  contextBytes: number;
}

/**
 * The page-context cache: most calls of a page share one context, built, frozen and measured once, and built again
 * when the page or the consent decision changed.
 */
export function createContextCache(env: Environment) {
  type Cached = PageFacts & { recorded: RecordedPage; consent?: Preferences };
  let last: Cached | undefined;
  return (recorded: RecordedPage, consent: Preferences | undefined): PageFacts => {
    if (
      last &&
      last.recorded[0] == recorded[0] &&
      last.recorded[1] == recorded[1] &&
      last.recorded[2] == recorded[2] &&
      last.consent == consent
    )
      return last;
    const page = pageContext(recorded[0], recorded[1], recorded[2]);
    const built = buildContext({ env, page });
    // Once the site made a decision, every message carries it.
    if (consent) built.consent = { categoryPreferences: consent };
    // Shared by the messages of this page: frozen, so that no message (nor a handler given one) changes another.
    const context = freeze(built);
    const cached: Cached = { recorded, consent, page, context, contextBytes: byteLength(stringify(context)) };
    return (last = cached);
  };
}
