// The shop's consent banner: a stand-in for a consent platform (CMP), wired to svc-analytics.
//
// index.html loads the library with `consent: { categories: ['analytics'] }`: until the visitor decides, events wait
// in the page's memory (nothing stored, nothing sent). The decision is the shop's to remember (this key), not the
// library's: index.html passes it to `analytics.consent()` on every page load, before anything else runs.
// The banner sits in the page's flow above the header: it never covers the shop. The footer's "Privacy settings"
// brings it back; "Opt out of analytics" calls `analytics.optOut()` (the library remembers that one itself, on the
// whole site) and "Opt back in" `analytics.optIn()`.

export const CONSENT_KEY = 'field-goods:consent'; // 'granted' | 'denied'
const OPT_OUT_KEY = 'field-goods:opted-out'; // '1' while opted out (for the footer's wording; the library keeps the choice)

const read = (key) => {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
};
const write = (key, value) => {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // no storage: the decision lasts for this page
  }
};

/** What the shop knows: 'pending' (no decision yet), 'granted', 'denied' or 'out' (opted out). */
export function consentState() {
  if (read(OPT_OUT_KEY) === '1') return 'out';
  const d = read(CONSENT_KEY);
  return d === 'granted' || d === 'denied' ? d : 'pending';
}

const TEXT = {
  pending: 'Not decided: events wait in this page’s memory. Nothing is stored or sent.',
  granted: 'Accepted: events are sent, and your anonymous id is kept in a first-party cookie.',
  denied: 'Rejected: events are discarded and nothing is stored.',
  out: 'Opted out: nothing is sent from this site and no id is kept, until you opt back in.',
};

/** Announces a change to the rest of the page (the events corner shows it). */
const announce = (state) => dispatchEvent(new CustomEvent('field-goods:consent', { detail: { state, text: TEXT[state] } }));

export function mountConsent({ analytics }) {
  const banner = document.createElement('section');
  banner.className = 'consent';
  banner.setAttribute('aria-label', 'Privacy choices');
  banner.dataset.testid = 'consent-banner';
  banner.innerHTML = `
    <div class="wrap consent-in">
      <p class="consent-text"><b>May we measure how you use the shop?</b>
        We send page views and shop events (svc-analytics) to learn what works. No advertising.
        <span class="consent-state muted small"></span></p>
      <div class="consent-actions">
        <button type="button" class="btn" data-choice="denied">Reject</button>
        <button type="button" class="btn primary" data-choice="granted">Accept</button>
      </div>
    </div>`;
  const skip = document.querySelector('.skip');
  if (skip) skip.after(banner);
  else document.body.prepend(banner);

  const foot = document.querySelector('.foot');
  const links = document.createElement('p');
  links.className = 'foot-links';
  links.innerHTML = `<button type="button" class="link-button" data-privacy>Privacy settings</button>
    · <button type="button" class="link-button" data-optout></button>`;
  foot.append(links);
  const optLink = links.querySelector('[data-optout]');

  const show = (open) => {
    const state = consentState();
    banner.hidden = !open;
    banner.querySelector('.consent-state').textContent = state === 'pending' ? '' : 'Now: ' + TEXT[state];
    for (const b of banner.querySelectorAll('[data-choice]')) b.setAttribute('aria-pressed', String(b.dataset.choice === state));
    optLink.textContent = state === 'out' ? 'Opt back in to analytics' : 'Opt out of analytics';
    announce(state);
  };

  banner.addEventListener('click', (e) => {
    const choice = e.target.closest('[data-choice]')?.dataset.choice;
    if (!choice) return;
    write(CONSENT_KEY, choice);
    // Accepting or rejecting in the banner also ends an opt-out: it is the visitor's latest word.
    if (read(OPT_OUT_KEY) === '1') {
      write(OPT_OUT_KEY, null);
      analytics().optIn();
    }
    analytics().consent({ analytics: choice === 'granted' });
    show(false);
  });
  links.querySelector('[data-privacy]').addEventListener('click', () => {
    show(true);
    banner.querySelector('[data-choice="granted"]').focus();
  });
  optLink.addEventListener('click', () => {
    if (consentState() === 'out') {
      write(OPT_OUT_KEY, null);
      analytics().optIn();
    } else {
      write(OPT_OUT_KEY, '1');
      analytics().optOut();
    }
    show(!banner.hidden);
  });

  show(consentState() === 'pending');
}
