import type { DebugTools } from './debug';

export type { DebugTools };

// Where the debug tools cannot be had (no file next to an inlined bundle, or it is blocked): plain console lines.
const plain: DebugTools = {
  log: (name, args) => console.log('[svc-analytics]', name, ...args),
  checkEcommerce() {},
};

/**
 * `debug(on)`: while it is on, `use` runs with the debug tools, which `load` fetches the first time (they are not
 * in the bundle: see src/debug/debug.ts; without them, plain console lines; a load that fails is told to `failed`); uses
 * run in call order.
 */
export function createDebugMode(load?: () => Promise<DebugTools>, failed?: (e: unknown) => void) {
  let on = false;
  let tools: Promise<DebugTools> | undefined;
  const use = (fn: (tools: DebugTools) => void) =>
    void (
      on &&
      // (a chunk that cannot load is told to `failed`, CONTRACT section 1; plain console lines go on instead)
      (tools ||= load ? load().then((t) => t || plain, (e) => (failed?.(e), plain)) : Promise.resolve(plain))
        .then((loaded) => on && fn(loaded))
        // a page's getter or console that throws while the tools read or write: never an unhandled rejection
        .catch(() => {})
    );
  return {
    set(value: boolean) {
      on = value;
      use(() => {}); // start loading now
    },
    use,
  };
}

/** The debug mode of an instance. */
export type DebugMode = ReturnType<typeof createDebugMode>;
