// Reads a V8 CPU profile (CDP `Profiler.stop`) of a loop of track() calls: which functions the samples taken
// while the loop ran fell in (self time), and how often each was on the stack at all (total time). Positions in
// our bundle are given as line:column (1-based, as DevTools shows them), with the code found there and, when a
// source map of the bundle exists, the source file, line and name it maps to.

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_INDEX = Object.fromEntries([...B64].map((c, i) => [c, i]));

/** Source map v3 `mappings` → per generated line, segments [genCol, src, srcLine, srcCol, name?] sorted by genCol. */
export function decodeMappings(mappings) {
  const lines = [];
  let src = 0, srcLine = 0, srcCol = 0, name = 0;
  for (const lineText of mappings.split(';')) {
    const segs = [];
    let genCol = 0;
    for (const segText of lineText.split(',')) {
      if (!segText) continue;
      const vals = [];
      let value = 0, shift = 0;
      for (const ch of segText) {
        const digit = B64_INDEX[ch];
        if (digit === undefined) throw new Error(`source map: bad character ${ch}`);
        value += (digit & 31) << shift;
        if (digit & 32) {
          shift += 5;
        } else {
          vals.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      genCol += vals[0];
      const seg = [genCol];
      if (vals.length >= 4) {
        src += vals[1];
        srcLine += vals[2];
        srcCol += vals[3];
        seg.push(src, srcLine, srcCol);
        if (vals.length >= 5) {
          name += vals[4];
          seg.push(name);
        }
      }
      segs.push(seg);
    }
    segs.sort((a, b) => a[0] - b[0]);
    lines.push(segs);
  }
  return lines;
}

/** The original position of a generated 0-based line/column: the last mapped segment at or before it on its line. */
export function originalPosition(map, decoded, line, column) {
  const segs = decoded[line];
  if (!segs) return null;
  let found = null;
  for (const seg of segs) {
    if (seg[0] > column) break;
    if (seg.length >= 4) found = seg;
  }
  if (!found) return null;
  return {
    source: map.sources[found[1]],
    line: found[2] + 1,
    column: found[3] + 1,
    name: found.length >= 5 ? map.names[found[4]] : null,
  };
}

const SPECIAL = new Set(['(root)', '(program)', '(idle)', '(garbage collector)']);

/**
 * @param {object} profile CDP Profiler.Profile
 * @param {object} o
 * @param {string} o.loopFunction name of the function that runs the loop (the window is its first to last sample)
 * @param {string} o.bundleUrlEnd how the URL of our bundle ends
 * @param {string} [o.bundle] the bundle's text, for the code excerpt at each position
 * @param {object|null} [o.map] the bundle's source map, if any
 * @param {number} [o.top] entries to return
 */
export function analyzeProfile(profile, { loopFunction, bundleUrlEnd, bundle = '', map = null, top = 12 }) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
  const inLoopMemo = new Map();
  const inLoop = (id) => {
    if (inLoopMemo.has(id)) return inLoopMemo.get(id);
    const n = byId.get(id);
    const v = !!n && (n.callFrame.functionName === loopFunction || (parent.has(id) && inLoop(parent.get(id))));
    inLoopMemo.set(id, v);
    return v;
  };
  const samples = profile.samples || [];
  const deltas = profile.timeDeltas || [];
  let first = -1, last = -1;
  samples.forEach((id, i) => {
    if (inLoop(id)) {
      if (first < 0) first = i;
      last = i;
    }
  });
  const out = { totalSamples: samples.length, windowSamples: 0, loopSamples: 0, windowMs: 0, entries: [], groups: {}, sourceMap: !!map };
  if (first < 0) return out;

  const decoded = map ? decodeMappings(map.mappings) : null;
  const bundleLines = bundle.split('\n');
  const keyOf = (cf) => `${cf.functionName}|${cf.url}|${cf.lineNumber}|${cf.columnNumber}`;
  const entries = new Map();
  const entryFor = (n) => {
    const cf = n.callFrame;
    const key = keyOf(cf);
    let e = entries.get(key);
    if (!e) {
      const isBundle = !!cf.url && cf.url.endsWith(bundleUrlEnd);
      const special = SPECIAL.has(cf.functionName) && !cf.url;
      e = {
        name: cf.functionName || '(anonymous)',
        // The loop was defined by a CDP evaluate: it has no URL either, but it is not the browser's.
        kind: special ? 'vm' : isBundle ? 'bundle' : cf.functionName === loopFunction ? 'loop' : cf.url ? 'other script' : 'native',
        location: isBundle
          ? `analytics.min.js:${cf.lineNumber + 1}:${cf.columnNumber + 1}`
          : cf.url
            ? `${cf.url.replace(/^.*\//, '') || cf.url}:${cf.lineNumber + 1}:${cf.columnNumber + 1}`
            : special ? '' : cf.functionName === loopFunction ? '(the bench)' : '(built-in)',
        self: 0,
        total: 0,
      };
      if (isBundle) {
        const text = bundleLines[cf.lineNumber] || '';
        e.code = text.slice(cf.columnNumber, cf.columnNumber + 60);
        if (decoded) e.original = originalPosition(map, decoded, cf.lineNumber, cf.columnNumber);
      }
      entries.set(key, e);
    }
    return e;
  };

  for (let i = first; i <= last; i++) {
    const id = samples[i];
    const n = byId.get(id);
    if (!n) continue;
    out.windowSamples++;
    out.windowMs += (deltas[i] || 0) / 1000;
    if (inLoop(id)) out.loopSamples++;
    const self = entryFor(n);
    self.self++;
    out.groups[self.kind] = (out.groups[self.kind] || 0) + 1;
    // Total: each function once per sample, however deep it recurs.
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const node = byId.get(cur);
      if (!node || node.callFrame.functionName === '(root)') continue;
      const e = entryFor(node);
      if (!seen.has(e)) {
        seen.add(e);
        e.total++;
      }
    }
  }
  const pct = (x) => (100 * x) / out.windowSamples;
  out.entries = [...entries.values()]
    .filter((e) => e.self > 0)
    .sort((a, b) => b.self - a.self)
    .slice(0, top)
    .map((e) => ({ ...e, selfPct: pct(e.self), totalPct: pct(e.total) }));
  out.groupsPct = Object.fromEntries(Object.entries(out.groups).map(([k, v]) => [k, pct(v)]));
  // The heaviest functions by total time, among ours: where the call's time goes from the top down.
  out.totals = [...entries.values()]
    .filter((e) => e.kind === 'bundle' && e.total > 0)
    .sort((a, b) => b.total - a.total)
    .slice(0, 6)
    .map((e) => ({ ...e, selfPct: pct(e.self), totalPct: pct(e.total) }));
  return out;
}
