declare module 'virtual:snippet' {
  /** The minified loader stub (dist/snippet.min.js), inlined at build time. */
  const text: string;
  export default text;
}
