// Semantic helpers called before `load` (the bundle without the stub, or the CDN bundle's start-up tasks): their
// required fields are checked when the call runs, after the calls made before it (found by review 8).
import { QUIET, sent } from '../harness';
import { expect, it } from 'vitest';
import { createAnalytics } from '../../src/api/analytics';
import { createTransforms } from '../../src/extend/transforms';
import { pluginRunner } from '../../src/extend/plugins';
import { addHelpers } from '../../src/helpers/add-helpers';

const unloaded = () => {
  const { api, load, helperDeps } = createAnalytics({ transforms: (s, r) => createTransforms(s, r, () => Promise.resolve(pluginRunner)), plan: () => Promise.reject(new Error('no plan')) });
  return { api: addHelpers(api, helperDeps), load };
};

it("semantic.userDeleted() right after identify(), both before load, is sent with the user's id", async () => {
  const { api, load } = unloaded();
  const identified = api.identify('u1');
  const deleted = api.semantic.userDeleted();
  load('wk_test', QUIET);
  await identified;
  await expect(deleted).resolves.toMatchObject({ event: { event: 'User Deleted', userId: 'u1' } });
  await api.flush();
  expect(sent().map((m) => m.event || m.type)).toEqual(['identify', 'User Deleted']);
});

it('is still refused, once it runs, without an identified user', async () => {
  const { api, load } = unloaded();
  const refused = api.semantic.userSuppressed();
  load('wk_test', QUIET);
  await expect(refused).rejects.toMatchObject({ code: 'invalid_arguments', message: 'User Suppressed: userId is required (identify the user first)' });
});
