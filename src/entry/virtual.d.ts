declare module 'virtual:snippet' {
  /** The minified loader stub (dist/snippet.min.js), inlined at build time. */
  const text: string;
  export default text;
}

// What the library reads of newer or non-standard browser interfaces, typed once here instead of cast where read.
interface Navigator {
  /** Global Privacy Control (https://privacycg.github.io/gpc-spec/#dom-globalprivacycontrol). */
  readonly globalPrivacyControl?: boolean;
}
