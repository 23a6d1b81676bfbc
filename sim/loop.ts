import { AsyncLocalStorage } from 'node:async_hooks';

// The virtual event loop: one clock for the whole simulated browser, tasks ordered by (time, sequence), and the
// page each task belongs to (carried through promise continuations by AsyncLocalStorage, so a global the delivery
// code reads at call time, such as setTimeout or localStorage, answers for the page that calls it). No real timer
// is used: between two virtual tasks the loop lets setImmediate callbacks (fake-indexeddb's scheduler: IndexedDB's
// tasks) run until none is left, or only some rounds of them; real microtasks always run to the end before the next
// task, as a browser's microtask checkpoint does after every task (https://html.spec.whatwg.org/#perform-a-microtask-checkpoint).

/** What the loop knows of a page (the browser's Page adds the rest). */
export interface Agent {
  id: string;
  /** Gone: its tasks are dropped (a crashed or closed page runs no more script). */
  dead: boolean;
  /** Frozen or in the back/forward cache: its tasks wait until it runs again (Page Lifecycle, #freezing). */
  frozen: boolean;
  held: Task[];
}
export interface Task {
  at: number;
  seq: number;
  agent?: Agent;
  fn: () => void;
  cancelled?: boolean;
}

export const als = new AsyncLocalStorage<Agent>();
const realImmediate = globalThis.setImmediate;

export function createLoop(start: number, onThrow: (e: unknown, agent?: Agent) => void) {
  let now = start;
  let seq = 0;
  const tasks: Task[] = [];
  const byId = new Map<number, Task>();
  // Tasks run in a row without the clock moving.
  let same = 0;
  // fake-indexeddb schedules with globalThis.setImmediate, read at each call: its callbacks wait here until `drain`
  // runs them, a round at a time, so the loop knows when IndexedDB work is done, and can leave some of it undone.
  const immediates: (() => void)[] = [];
  globalThis.setImmediate = ((fn: (...a: unknown[]) => void, ...a: unknown[]) => {
    immediates.push(() => fn(...a));
  }) as typeof setImmediate;

  const insert = (t: Task) => {
    let lo = 0;
    let hi = tasks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const m = tasks[mid];
      if (m.at < t.at || (m.at == t.at && m.seq < t.seq)) lo = mid + 1;
      else hi = mid;
    }
    tasks.splice(lo, 0, t);
  };
  const run = (t: Task) => {
    const a = t.agent;
    if (a?.dead) return;
    if (a?.frozen) return void a.held.push(t);
    try {
      a ? als.run(a, t.fn) : t.fn();
    } catch (e) {
      onThrow(e, a);
    }
  };
  // Once this resolves, every microtask queued before has run (Node runs them all before its next immediate), those it
  // queued too, and no IndexedDB task has run meanwhile (they wait in `immediates`).
  const tick = () => new Promise<void>((r) => realImmediate(r));

  return {
    now: () => now,
    /** Runs `fn` for `agent` (null: the browser; omitted: the page running now) `ms` from now; returns an id for `cancel`. */
    at(ms: number, fn: () => void, agent: Agent | null = als.getStore() ?? null): number {
      ms = Math.max(0, ms || 0);
      // A page's timers set from timers in a row are clamped to 4 ms (https://html.spec.whatwg.org/#timers, the
      // nesting level): time moves on while a page re-arms a timer at 0 ms.
      if (agent && ms < 4 && same > 5) ms = 4;
      const t: Task = { at: now + ms, seq: ++seq, agent: agent ?? undefined, fn };
      insert(t);
      byId.set(t.seq, t);
      return t.seq;
    },
    cancel(id: unknown) {
      const t = byId.get(id as number);
      if (t) (t.cancelled = true), byId.delete(t.seq);
    },
    /**
     * Lets IndexedDB's tasks (immediates) run: all of them, or `rounds` rounds (IndexedDB work left half done); the
     * microtasks of each, and those pending now, always run to the end.
     */
    async drain(rounds = Infinity) {
      await tick();
      for (let i = 0; i < rounds && immediates.length; i++) {
        // (IndexedDB work that never ends: a spin in real time, reported rather than hung on)
        if (i > 20000) throw new Error('drain: immediates never ran out');
        // (each as a task of its own: Node runs the microtasks of one before the next)
        for (const fn of immediates.splice(0)) realImmediate(fn);
        await tick();
      }
    },
    /** When the next task is due (Infinity: none). */
    next: () => {
      while (tasks.length && tasks[0].cancelled) tasks.shift();
      return tasks.length ? tasks[0].at : Infinity;
    },
    /** Runs the next task, advancing the clock to it; false when there is none. */
    step(): boolean {
      let t: Task | undefined;
      while ((t = tasks.shift()) && t.cancelled);
      if (!t) return false;
      byId.delete(t.seq);
      same = t.at <= now ? same + 1 : 0;
      if (same > 3000) throw new Error(`livelock: 3,000 tasks at one instant, the last ${t.agent?.id}: ${String(t.fn).slice(0, 300)}`);
      now = Math.max(now, t.at);
      run(t);
      return true;
    },
    /** A frozen agent runs again: what waited for it runs now, in order. */
    thaw(a: Agent) {
      a.frozen = false;
      const held = a.held.splice(0);
      for (const t of held) if (!t.cancelled) (t.at = now), (t.seq = ++seq), insert(t);
    },
    /** Runs `fn` in `agent`'s context now (a browser event dispatched to a page). */
    dispatch(agent: Agent, fn: () => void) {
      run({ at: now, seq: ++seq, agent, fn });
    },
    restore() {
      globalThis.setImmediate = realImmediate;
    },
  };
}
export type Loop = ReturnType<typeof createLoop>;
