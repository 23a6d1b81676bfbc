import { expect, vi } from 'vitest';

// A fake Web Locks manager for the delivery tests (tabs.test.ts, tabs-mutants.test.ts).

export interface Request {
  name: string;
  signal?: AbortSignal;
  cb: (lock: Lock) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

// A LockManager with exclusive locks shared by every "tab" of a test, as the browser's is by a site's pages.
export function fakeLocks() {
  const held = new Set<string>();
  const waiting: Request[] = [];
  const grant = (r: Request) => {
    held.add(r.name);
    // The callback runs later, never inside request(), as in browsers.
    Promise.resolve()
      .then(() => r.cb({ name: r.name, mode: 'exclusive' } as Lock))
      .then(
        (v) => (release(r.name), r.resolve(v)),
        (e) => (release(r.name), r.reject(e)),
      );
  };
  const release = (name: string) => {
    held.delete(name);
    const i = waiting.findIndex((w) => w.name == name);
    if (i >= 0) grant(waiting.splice(i, 1)[0]);
  };
  const manager = {
    request: vi.fn(
      (name: string, options: LockOptions, cb: (lock: Lock) => unknown) =>
        new Promise((resolve, reject) => {
          const r: Request = { name, signal: options.signal, cb, resolve, reject };
          if (r.signal?.aborted) return reject(new DOMException('aborted', 'AbortError'));
          if (!held.has(name) && !waiting.some((w) => w.name == name)) return grant(r);
          waiting.push(r);
          r.signal?.addEventListener('abort', () => {
            const i = waiting.indexOf(r);
            if (i >= 0) waiting.splice(i, 1), reject(new DOMException('aborted', 'AbortError'));
          });
        }),
    ),
    query: vi.fn(async () => ({
      held: [...held].map((name) => ({ name, mode: 'exclusive' })),
      pending: waiting.map((w) => ({ name: w.name, mode: 'exclusive' })),
    })),
  };
  // Holds a lock the way another tab does while it lives; resolves to its release.
  const hold = async (name: string) => {
    let release!: () => void;
    manager.request(name, {}, () => new Promise<void>((r) => (release = r)));
    await vi.waitFor(() => expect(held.has(name)).toBe(true));
    return release;
  };
  return { manager, held, waiting, hold };
}
