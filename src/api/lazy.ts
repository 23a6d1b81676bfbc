/**
 * An edge that comes on first use (CONTRACT section 1, core and edges): `use` runs each function with what `load`
 * gives, at once when it is here (or when `load` gives it at once, as the npm entries do), else once it is, in call
 * order. A load that fails is told to `report`, what waits keeps waiting, and the next use loads again; what a
 * function throws is told to `report` too (never into the page), with `used` set: the edge is here, the use failed. `_settled(ms)` resolves once the load under way is over, either way, or `ms` passed.
 */
export function lazy<T extends object>(load: () => T | Promise<T>, report: (e: unknown, used?: 1) => void) {
  let got: T | undefined;
  let loading: Promise<void> | undefined;
  const waiting: ((t: T) => void)[] = [];
  const run = (f: (t: T) => void, t: T) => {
    try {
      f(t);
    } catch (e) {
      report(e, 1);
    }
  };
  const arrived = (t: T) => {
    got = t;
    for (const f of waiting.splice(0)) run(f, t);
  };
  const use = (f: (t: T) => void): void => {
    waiting.push(f);
    if (got || loading) return got && arrived(got);
    try {
      const t = load();
      if (!(t instanceof Promise)) return arrived(t);
      loading = t.then(arrived, (e) => {
        loading = undefined;
        report(e);
      });
    } catch (e) {
      report(e);
    }
  };
  // (`_settled`: once what was asked for so far came, or failed, or `ms` passed: `ready` waits for it, and a request
  // the network never answers must not hold `ready` for good)
  const settled = (ms: number) => loading && Promise.race([loading, new Promise<void>((r) => setTimeout(r, ms))]);
  return Object.assign(use, { _settled: settled });
}
