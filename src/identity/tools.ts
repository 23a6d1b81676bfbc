import type { LinkTools } from './link';
import { decorateLinks } from '../sources/decorate';
import { syncCookies } from './server-cookies';
import { adoptFrom } from './adopt-link';

/** The link and server-cookie tools that are not in the CDN bundle (its lazy chunk; a chunk of the npm entries too). */
export const linkTools: LinkTools = { adopt: adoptFrom, decorate: decorateLinks, sync: syncCookies };
