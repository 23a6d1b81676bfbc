declare module 'virtual:snippet' {
  /** The minified loader stub (dist/snippet.min.js), inlined at build time. */
  const text: string;
  export default text;
}

// What the library reads of newer or non-standard browser interfaces, typed once here instead of cast where read.
interface Navigator {
  /** Global Privacy Control (https://privacycg.github.io/gpc-spec/#dom-globalprivacycontrol). */
  readonly globalPrivacyControl?: boolean;
  /** User-Agent Client Hints (https://wicg.github.io/ua-client-hints/#navigatoruadata): Chromium only. */
  readonly userAgentData?: {
    brands?: { brand: string; version: string }[];
    mobile?: boolean;
    platform?: string;
    getHighEntropyValues?(hints: string[]): Promise<{ model?: string; platformVersion?: string }>;
  };
  /** Network Information (https://wicg.github.io/netinfo/#connection-attribute): Chromium only. */
  readonly connection?: { type?: string };
}

// Temporal (https://tc39.es/proposal-temporal/#sec-temporal.now.timezoneid), where the engine has it.
declare var Temporal: { Now: { timeZoneId(): string } } | undefined;
