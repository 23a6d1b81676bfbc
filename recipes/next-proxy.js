// svc-analytics first-party serving with Next.js, part 2 of 2 (part 1: next.config.mjs, the rewrites). Save this file
// as proxy.js next to next.config.mjs (Next.js 16; before 16: middleware.js, same content). It runs before the
// rewrites and gives the upstreams what rewrites alone do not: the visitor's address as X-Forwarded-For (the API
// records context.ip from the request; a self-hosted `next start` otherwise sends nothing of the kind), and none of
// your site's cookies (a beacon to your own origin carries them). Tested with `next dev`: e2e/first-party.spec.ts.
// If you have a proxy.js already, call this one from it for these paths and add them to its matcher.
import { NextResponse } from 'next/server';

export function proxy(request) {
  const headers = new Headers(request.headers);
  headers.delete('cookie');
  // Vercel sets x-real-ip; `next start` sets x-forwarded-for to the address that connected.
  const ip = request.headers.get('x-real-ip') || request.headers.get('x-forwarded-for')?.split(',')[0].trim();
  if (ip) headers.set('x-forwarded-for', ip);
  return NextResponse.next({ request: { headers } });
}

// Next.js 12-15 call it `middleware`.
export { proxy as middleware };

export const config = { matcher: ['/ingest/:path*', '/s/a.js', '/s/analytics.debug.min.js'] };
