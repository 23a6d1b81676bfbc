type Handler = (...args: any[]) => void;

/** Calls a function of the page's; if it throws, the error is reported like any page error, later, without breaking us. */
export function safely(fn: Handler | undefined, ...args: unknown[]) {
  try {
    fn?.(...args);
  } catch (e) {
    setTimeout(() => {
      throw e;
    });
  }
}

/** A tiny event emitter (after mitt); a handler that throws is isolated from the others and from the caller. */
export function createEmitter() {
  const all = new Map<string, Handler[]>();
  return {
    on(name: string, h: Handler) {
      all.set(name, (all.get(name) || []).concat(h));
    },
    off(name: string, h: Handler) {
      all.set(name, (all.get(name) || []).filter((x) => x !== h));
    },
    emit(name: string, ...args: unknown[]) {
      for (const h of all.get(name) || []) safely(h, ...args);
    },
  };
}
