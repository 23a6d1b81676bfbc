import type { AnalyticsError } from '../message/errors';
import type { CallOptions } from '../types';
import { analyticsError, describe } from '../message/errors';
import type { Elements, OfElement } from '../extend/types';

/**
 * `trackLink` / `trackForm` (and their analytics.js aliases `trackClick` / `trackSubmit`), CONTRACT section 2.
 *
 * analytics.js stops every tracked click and submit, waits up to 300-500 ms for the track call, then navigates with
 * `location.href` or submits with `form.submit()`. Here a message is in the queue before the click's task ends (see calls.ts `start`), and the
 * page-exit hand-off (src/delivery/handoff.ts) sends what the queue holds when the page goes away, so the browser's own
 * navigation and submission go ahead untouched: no delay, no lost `submitter`, no broken `preventDefault` of the
 * site's own handlers. Only when the message cannot be queued at once (a source middleware or plugin that answers
 * later, or a call before `load`) is the navigation held until it is, for at most `timeout` ms.
 */

export interface AutotrackDeps {
  /** Sends a track call; `queued` says whether the message is in the queue already. */
  track(event: unknown, properties: unknown, options: CallOptions | undefined): { queued: boolean; done: Promise<unknown> };
  report(error: AnalyticsError): void;
  /** How long a held navigation waits for its message, in ms. */
  timeout(): number;
}

// https://html.spec.whatwg.org/multipage/links.html#following-hyperlinks: `xlink:href` on SVG links
const XLINK = 'http://www.w3.org/1999/xlink';

// A target that names another browsing context (a new tab, a frame): this page stays where it is.
// (`getAttribute`: an SVG link's `target` property is an SVGAnimatedString.)
const elsewhere = (target: string | null | undefined) => !!target && !/^_(self|top|parent)$/i.test(target);

function list(elements: Elements): Element[] {
  if (!elements) return [];
  if ((elements as Element).nodeType == 1) return [elements as Element];
  const jq = elements as { toArray(): Element[] };
  const all = typeof jq.toArray == 'function' ? jq.toArray() : Array.from(elements as ArrayLike<Element>);
  return all.filter((e) => e && e.nodeType == 1);
}

/**
 * Holds a click or submit once the page's own handlers had it: a listener on the window in the bubble phase runs
 * after the element's, the document's and a router's (React Router, Next.js and Vue Router step aside for an event
 * already prevented, so preventing it in the element's listener turned their routes into page loads). One they
 * cancelled is theirs; else it is prevented here, and `go` runs once `wait` settles (or `timeout` ms passed), unless a
 * handler after this one cancels it too. An event stopped before the window goes ahead as the browser does it.
 */
function holdAfterPage(e: Event, wait: Promise<unknown>, go: () => void, after: (done: Promise<unknown>, then: () => void) => void) {
  let decided = false;
  const wrap = (key: 'preventDefault' | 'stopPropagation' | 'stopImmediatePropagation', then: () => void) => {
    const own = e[key];
    try {
      Object.defineProperty(e, key, { value: () => (own.call(e), then()), configurable: true });
    } catch {
      // a frozen event: the held action goes ahead, as analytics.js does
    }
  };
  const decide = (seen?: Event) => {
    if ((seen && seen != e) || decided) return;
    decided = true;
    removeEventListener(e.type, decide);
    if (e.defaultPrevented) return;
    let cancelled = false;
    e.preventDefault();
    wrap('preventDefault', () => (cancelled = true));
    after(wait, () => cancelled || go());
  };
  // An event a handler stops on its way (a card's, a dropdown's, React's root) never reaches the window: it is
  // decided when it is stopped (a handler that then prevents it too still takes it over).
  if (e.cancelBubble) return decide();
  wrap('stopPropagation', decide);
  wrap('stopImmediatePropagation', decide);
  addEventListener(e.type, decide);
  // (the dispatch is over by then)
  setTimeout(() => removeEventListener(e.type, decide));
}

// (the deps and what it returns cross from the bundle to the sources chunk: names terser does not mangle, no `_`)
export function createAutotrack({ track, report, timeout }: AutotrackDeps) {
  // The element's event name and properties (analytics.js lets both be functions of the element), then track.
  const send = (el: Element, event: OfElement<unknown>, properties: OfElement<unknown>, options?: CallOptions) => {
    try {
      const name = typeof event == 'function' ? event(el) : event;
      const props = typeof properties == 'function' ? properties(el) : properties;
      return track(name, props, options);
    } catch (e) {
      report(analyticsError('callback_error', `trackLink/trackForm: a function of the page threw: ${describe(e)}`));
    }
  };
  // The promise of a message that is not queued yet (a navigation waits for it); undefined once it is, or unsent.
  const notQueued = (sent: ReturnType<typeof send>) => (sent && !sent.queued ? sent.done : undefined);
  // Runs `then` once the message is queued, or after `timeout` ms.
  const after = (done: Promise<unknown>, then: () => void) => {
    let ran = false;
    const go = () => {
      if (ran) return;
      ran = true;
      try {
        then();
      } catch {
        // the navigation or submission itself failed: the page's business
      }
    };
    setTimeout(go, timeout());
    done.then(go, go);
  };

  function trackLink(elements: Elements, event: OfElement<unknown>, properties?: OfElement<unknown>, options?: CallOptions) {
    for (const el of list(elements))
      el.addEventListener('click', (e) => {
        const wait = notQueued(send(el, event, properties, options));
        const m = e as MouseEvent;
        // The link clicked, when it is inside the tracked element (a card of several links); else the element itself.
        const hit = (e.target as Element | null)?.closest?.('a[href],area[href]');
        const link = hit && el.contains(hit) ? hit : el;
        const href =
          link.getAttribute('href') ||
          link.getAttributeNS(XLINK, 'href') ||
          link.getAttribute('xlink:href') ||
          el.getElementsByTagName('a')[0]?.getAttribute('href');
        // A new tab, window or frame (a target, the page's <base target>, ctrl/shift/meta, middle button) or a
        // download (alt, `download`) leaves this page where it is: never held.
        if (!wait || !href || e.defaultPrevented) return;
        const target = link.getAttribute('target') ?? document.querySelector('base[target]')?.getAttribute('target');
        if (elsewhere(target) || link.hasAttribute('download') || m.altKey || m.ctrlKey || m.shiftKey || m.metaKey || m.button == 1) return;
        let url: string;
        try {
          url = new URL(href, document.baseURI).href;
        } catch {
          return; // an href the URL parser refuses: the browser's own click does what it does with it
        }
        // Only a web page is followed: never a `javascript:`, `data:` or `vbscript:` URL (a descendant link of a
        // tracked card may hold one the browser would not have followed for that click). Anything else (`mailto:`
        // too) is left to the browser's own click, not held.
        if (!/^https?:/.test(url)) return;
        holdAfterPage(e, wait, () => location.assign(url), after);
      });
  }

  function trackForm(elements: Elements, event: OfElement<unknown>, properties?: OfElement<unknown>, options?: CallOptions) {
    for (const el of list(elements)) {
      const form = el as HTMLFormElement;
      // The submit event this form tracked last, until a script submission follows it, and its message while a
      // middleware or plugin still has it.
      let tracked: Event | undefined;
      let pending: Promise<unknown> | undefined;
      // Set by a script submission this task (the page's own submit handler may submit by script before ours runs).
      let scripted = false;
      // In the capture phase: before the page's own handlers on the form.
      el.addEventListener(
        'submit',
        (e) => {
          tracked = e;
          if (scripted) return; // that script submission was this one, and tracked
          pending = notQueued(send(el, event, properties, options));
          if (!pending || e.defaultPrevented || el.tagName != 'FORM') return;
          const submitter = (e as SubmitEvent).submitter as HTMLButtonElement | null;
          if (elsewhere((submitter && submitter.getAttribute('formtarget')) || form.getAttribute('target'))) return;
          holdAfterPage(e, pending, () => submitAs(form, submitter), after);
        },
        true,
      );
      // form.submit() fires no submit event (https://html.spec.whatwg.org/multipage/form-control-infrastructure.html#dom-form-submit):
      // a script submission is tracked here, unless it carries out a submit event tracked above that a handler held.
      const submit = form.submit;
      if (typeof submit == 'function')
        try {
          Object.defineProperty(form, 'submit', {
            configurable: true,
            writable: true,
            value(this: HTMLFormElement) {
              // (held: prevented by a handler, or submitted by one while its submit event is still dispatched)
              const held = tracked && (tracked.defaultPrevented || (!!pending && tracked.eventPhase != 0));
              tracked = undefined;
              // (a submit event of this task, dispatched after this, is this submission)
              scripted = true;
              setTimeout(() => (scripted = false));
              // (the held submit's message, or this one, may still be with a middleware: it goes first)
              const wait = held ? pending : notQueued(send(el, event, properties, options));
              if (!wait) return submit.call(this);
              after(wait, () => submit.call(this));
            },
          });
        } catch {
          // a form that cannot take the property: its script submissions go untracked
        }
    }
  }

  return { trackLink, trackForm };
}

// The submitter's overrides of the form's own attributes (https://html.spec.whatwg.org/multipage/form-control-infrastructure.html#form-submission-attributes).
const OVERRIDES = [
  ['formaction', 'action'],
  ['formmethod', 'method'],
  ['formenctype', 'enctype'],
  ['formtarget', 'target'],
];

/**
 * Submits a held form as its submitter would have: `form.submit()` sends no submitter and ignores its `formaction`,
 * `formmethod`, `formenctype` and `formtarget`, so these are set on the form for the submission, and the submitter's
 * name and value go in as a field; all are undone once the form data is built (synchronously, by `submit`).
 */
function submitAs(form: HTMLFormElement, submitter: HTMLButtonElement | null) {
  const undo: (() => void)[] = [];
  if (submitter) {
    for (const [from, to] of OVERRIDES)
      if (submitter.hasAttribute(from)) {
        const before = form.getAttribute(to);
        form.setAttribute(to, submitter.getAttribute(from)!);
        undo.push(() => (before == null ? form.removeAttribute(to) : form.setAttribute(to, before)));
      }
    if (submitter.name) {
      const field = document.createElement('input');
      field.type = 'hidden';
      field.name = submitter.name;
      field.value = submitter.value;
      form.appendChild(field);
      undo.push(() => field.remove());
    }
  }
  try {
    HTMLFormElement.prototype.submit.call(form);
  } finally {
    undo.forEach((f) => f());
  }
}

export type Autotrack = ReturnType<typeof createAutotrack>;
