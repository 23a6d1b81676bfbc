// Trusted Types (security-3 L11): under a CSP `require-trusted-types-for 'script'`, assigning a string to a script's
// `src` throws in Chromium, so the bundle could not load its chunks. Their URLs go through the library's policy,
// 'svc-analytics', which a site that requires Trusted Types allows with `trusted-types svc-analytics` (README, CSP).
// The loader stub has no room for a policy (1,000 bytes, CONTRACT section 1): it assigns the bundle's URL as a string,
// which such a site passes with a `default` policy, or it loads the bundle with a <script> tag (README).

/**
 * The little the bundle uses of `window.trustedTypes` (no DOM typings for it). The policy's TrustedScriptURL is typed
 * as the string it stands for: the `src` setter takes either.
 */
interface ScriptUrlPolicy {
  createScriptURL(url: string): string;
}
declare global {
  interface Window {
    trustedTypes?: { createPolicy(name: string, rules: ScriptUrlPolicy): ScriptUrlPolicy };
  }
}

// Created when the bundle starts (security-5 I4: a script that runs after it cannot claim the name first; a name can be
// created once per page, unless the CSP allows duplicates), and kept here only: no page script can use it. Where it
// cannot be created (no Trusted Types, or a CSP that does not allow the name), URLs stay strings, as before (and the
// next chunk tries again).
const create = () => {
  try {
    return window.trustedTypes?.createPolicy('svc-analytics', { createScriptURL: String });
  } catch {}
};
let policy = create();

/** `url` as a script's `src` takes it: a TrustedScriptURL of the library's policy where it can be created, else the string. */
export const scriptUrl = (url: string): string => {
  try {
    // (no trustedTypes: `policy` stays undefined, and reading its method throws)
    return (policy ||= create())!.createScriptURL(url);
  } catch {
    return url;
  }
};
