import type { World } from './world';

// The invariants, checked at the end of a run (issue 27). Each returns what broke, in words.

export function check(w: World): string[] {
  const out = [...w.errors];
  const { log, delivered } = w.net;
  const carried = new Map<string, { unknowable: boolean; lost: boolean }>();
  for (const r of log)
    for (const id of r.ids) {
      const c = carried.get(id) ?? carried.set(id, { unknowable: false, lost: false }).get(id)!;
      c.unknowable ||= !!r.unknowable;
      c.lost ||= !!r.lost;
    }
  // Every message whose call resolved is delivered, unless erased, expired, refused, cleared with the site's data,
  // kept in memory only (storage failed, then its page died), or lost by the browser after it took it (a beacon or
  // deferred request that failed: the page was told it was accepted, and sendBeacon gives no answer).
  for (const a of w.accepted.values()) {
    if (!a.resolved || delivered.get(a.id)) continue;
    // (a message the API refuses is kept and tried alone until a request of others is accepted, see delivery/answer.ts)
    if (w.excused.has(a.id) || a.page.fellBack || carried.get(a.id)?.lost || w.net.poison.has(a.id)) continue;
    out.push(`lost: ${a.id} (accepted by ${a.page.id} at ${((a.at - w.loop.now()) / 1000).toFixed(1)}s from the end) never delivered`);
  }
  // Twice only where nobody could know it had arrived: a request of it in flight when its page died, an answer lost
  // or never given, a deferred request the browser sent for a page that died without an event.
  for (const [id, count] of delivered) if (count > 1 && !carried.get(id)?.unknowable) out.push(`duplicate: ${id} delivered ${count} times, and no request of it was unknowable`);
  for (const r of log) {
    // A deferred request its page handed to the browser before an erasure made while it ran no script (see `erase`).
    const handedBefore = (erasure: number) => r.via == 'later' && r.since! <= erasure && !!w.unreachable.get(r.page as never)?.includes(erasure);
    const binding = r.writeKey + ' ' + r.url;
    for (const id of r.ids) {
      const a = w.accepted.get(id);
      if (!a) out.push(`request #${r.n} (${r.via}) carried ${id}, which no call queued`);
      else if (a.binding != binding) out.push(`request #${r.n} (${r.via}) sent ${id} under "${binding}", queued under "${a.binding}"`);
      const erased = w.erased.get(id);
      if (erased != null && r.at > erased && !handedBefore(erased)) out.push(`request #${r.n} (${r.via}) sent ${id} after its erasure`);
    }
    if (r.at > w.optedOutAt && !handedBefore(w.optedOutAt)) out.push(`request #${r.n} (${r.via}) of ${r.page.id} sent after the opt-out`);
  }
  return out;
}
