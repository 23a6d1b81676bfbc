import type { LinkTools } from './link';
import { decorateLinks } from '../sources/decorate';
import { syncCookies } from './server-cookies';

/** The link and server-cookie tools that are not in the CDN bundle (its lazy chunk; a chunk of the npm entries too). */
export const linkTools: LinkTools = { decorate: decorateLinks, sync: syncCookies };
