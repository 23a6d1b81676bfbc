import type { Loop, Agent } from './loop';

// Web Locks (https://w3c.github.io/web-locks/), exclusive mode only (all the delivery code asks for): one holder a
// name, requests granted in order as tasks of the page that asked, a request whose signal aborts while waiting
// rejects with AbortError, and a page that goes away releases what it holds and drops what it asked for
// (#lock-manager "when an agent terminates"). A page in the back/forward cache keeps its locks; another page asking
// for one evicts it (Chromium's NotRestoredReason "weblocks-contention").

interface Waiter {
  page: Agent;
  name: string;
  cb: (lock: unknown) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export function createLocks(loop: Loop) {
  const held = new Map<string, Waiter>();
  const queue: Waiter[] = [];
  /** Called when a page in the back/forward cache holds a lock another page asks for (it is evicted). */
  let onContention: (holder: Agent) => void = () => {};

  const grant = () => {
    for (const w of [...queue]) {
      if (held.has(w.name) || w.page.dead) continue;
      queue.splice(queue.indexOf(w), 1);
      held.set(w.name, w);
      loop.at(0, () => {
        let result: Promise<unknown>;
        try {
          result = Promise.resolve(w.cb({ name: w.name, mode: 'exclusive' }));
        } catch (e) {
          result = Promise.reject(e);
        }
        result.then(
          (v) => (free(w), w.resolve(v)),
          (e) => (free(w), w.reject(e)),
        );
      }, w.page);
    }
  };
  const free = (w: Waiter) => {
    if (held.get(w.name) == w) held.delete(w.name), grant();
  };

  return {
    set onContention(fn: (holder: Agent) => void) {
      onContention = fn;
    },
    managerFor(page: Agent) {
      return {
        // (https://w3c.github.io/web-locks/#api-lock-manager-request: `request(name, callback)` too, as the service
        // worker's delivery asks)
        request(name: string, options: { signal?: AbortSignal } | ((lock: unknown) => unknown), callback?: (lock: unknown) => unknown) {
          const cb = typeof options == 'function' ? options : callback!;
          if (typeof options == 'function') options = {};
          return new Promise((resolve, reject) => {
            // (a dead page's leftover code asks in vain: its agent is gone, nothing is granted to it)
            if (page.dead) return;
            if (options.signal?.aborted) return reject(new DOMException('aborted', 'AbortError'));
            const w: Waiter = { page, name, cb, resolve, reject };
            queue.push(w);
            options.signal?.addEventListener('abort', () => {
              const i = queue.indexOf(w);
              if (i >= 0) queue.splice(i, 1), loop.at(0, () => reject(new DOMException('aborted', 'AbortError')), page);
            });
            const holder = held.get(name)?.page;
            if (holder && holder != page && (holder as { life?: string }).life == 'cached') onContention(holder);
            grant();
          });
        },
        query: () =>
          Promise.resolve({
            held: [...held.values()].map((w) => ({ name: w.name, mode: 'exclusive', clientId: w.page.id })),
            pending: queue.map((w) => ({ name: w.name, mode: 'exclusive', clientId: w.page.id })),
          }),
      };
    },
    /** A page went away: its locks are released, its requests dropped (never settled: its script is gone). */
    release(page: Agent) {
      for (let i = queue.length - 1; i >= 0; i--) if (queue[i].page == page) queue.splice(i, 1);
      for (const [name, w] of held) if (w.page == page) held.delete(name);
      grant();
    },
  };
}
