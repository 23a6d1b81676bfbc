// linkDomains with the consent option (found by review 6): before a grant nothing is asked for, not even the tools'
// chunk (CONTRACT section 3: no request is made until consent() grants every listed category).
import { QUIET } from '../harness';
import { expect, it, vi } from 'vitest';
import { createAnalytics } from '../../src/api/analytics';
import { createTransforms } from '../../src/extend/transforms';
import { pluginRunner } from '../../src/extend/plugins';
import { linkTools } from '../../src/identity/tools';

it('asks for the link tools only once consent is granted, and at load without the consent option', async () => {
  const tools = vi.fn(() => Promise.resolve(linkTools));
  const make = () => createAnalytics({ transforms: (s, r) => createTransforms(s, r, () => Promise.resolve(pluginRunner)), tools, plan: () => Promise.reject(new Error('no plan')) }).api;
  const gated = make();
  gated.load('wk_test', { ...QUIET, linkDomains: ['checkout.test'], consent: { categories: ['analytics'] } });
  await gated.ready();
  expect(tools).not.toHaveBeenCalled();
  gated.consent({ analytics: true });
  await gated.ready();
  expect(tools).toHaveBeenCalledTimes(1);
  const open = make();
  open.load('wk_test', { ...QUIET, linkDomains: ['checkout.test'] });
  expect(tools).toHaveBeenCalledTimes(2);
});
