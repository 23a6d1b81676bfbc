type Handler = (...args: any[]) => void;

/**
 * The one guard for calling a function of the page (a callback, an `on` handler): what it throws goes to `thrown`,
 * never into the page as an uncaught exception (CONTRACT section 2), and the caller carries on.
 */
export function createGuard(thrown: (error: unknown) => void) {
  return (fn: Handler | undefined, ...args: unknown[]) => {
    try {
      fn?.(...args);
    } catch (e) {
      thrown(e);
    }
  };
}

/**
 * A tiny event emitter (after mitt); a handler that throws is isolated from the others and from the caller, and
 * handed to `thrown` with the event's name. `tap` hears every event first (debug logging).
 */
export function createEmitter(thrown: (error: unknown, name: string) => void, tap?: (name: string, args: unknown[]) => void) {
  const all = new Map<string, Handler[]>();
  return {
    on(name: string, h: Handler) {
      all.set(name, (all.get(name) || []).concat(h));
    },
    off(name: string, h: Handler) {
      all.set(name, (all.get(name) || []).filter((x) => x !== h));
    },
    emit(name: string, ...args: unknown[]) {
      tap?.(name, args);
      for (const h of all.get(name) || []) createGuard((e) => thrown(e, name))(h, ...args);
    },
  };
}

/** `fn` for its first call only (later calls do nothing). */
export function once(fn: () => void): () => void {
  let done = false;
  return () => void (done || ((done = true), fn()));
}
