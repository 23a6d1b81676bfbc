import type { DebugTools } from './debug';

export type { DebugTools };

/**
 * `debug(on)`: while it is on, `use` runs with the debug tools, which `load` fetches the first time (they are not
 * in the bundle: see src/debug.ts); uses run in call order.
 */
export function createDebugMode(load?: () => Promise<DebugTools>) {
  let on = false;
  let tools: Promise<DebugTools | void> | undefined;
  const use = (fn: (tools: DebugTools) => void) =>
    void (on && load && (tools ||= load().catch(() => {})).then((loaded) => loaded && on && fn(loaded)));
  return {
    set(value: boolean) {
      on = value;
      use(() => {}); // start loading now
    },
    use,
  };
}
