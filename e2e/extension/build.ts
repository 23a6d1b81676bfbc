// Builds the Manifest V3 extension of e2e/extension from the PACKED package, as an extension author would: `npm pack`
// (the tarball a registry serves), unpacked as node_modules/svc-analytics in a scratch directory, and the
// extension's service worker and popup bundled against it with rollup (chunks inlined, minified: no code loaded from
// elsewhere, as Manifest V3 requires). The collector's address goes in through `virtual:config`.
import { rollup } from 'rollup';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import terser from '@rollup/plugin-terser';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));

/** Packs the package and unpacks it in a scratch node_modules (idb-keyval, its dependency, linked from the repo's). */
function installPacked(): string {
  const scratch = mkdtempSync(join(tmpdir(), 'svc-ext-'));
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', scratch], { cwd: root, encoding: 'utf8' }).trim().split('\n').pop()!;
  const pkg = join(scratch, 'node_modules', 'svc-analytics');
  mkdirSync(pkg, { recursive: true });
  execFileSync('tar', ['-xzf', join(scratch, tarball), '-C', pkg, '--strip-components=1']);
  symlinkSync(join(root, 'node_modules', 'idb-keyval'), join(scratch, 'node_modules', 'idb-keyval'));
  return scratch;
}

/** Builds the extension for a collector at `apiHost`; resolves with its directory (load it unpacked). */
export async function buildExtension(apiHost: string): Promise<string> {
  const scratch = installPacked();
  const out = join(scratch, 'extension');
  mkdirSync(out);
  for (const f of ['manifest.json', 'popup.html', 'wake.html', 'wake.js']) copyFileSync(join(here, f), join(out, f));
  const config = {
    name: 'config',
    resolveId: (id: string) => (id == 'virtual:config' ? id : null),
    load: (id: string) => (id == 'virtual:config' ? `export const apiHost = ${JSON.stringify(apiHost)};` : null),
  };
  for (const name of ['background', 'popup']) {
    // (the source beside the scratch node_modules, so that `svc-analytics` resolves to the packed copy)
    copyFileSync(join(here, 'src', name + '.js'), join(scratch, name + '.js'));
    const bundle = await rollup({
      input: join(scratch, name + '.js'),
      plugins: [config, nodeResolve({ browser: true })],
      logLevel: 'silent',
    });
    await bundle.write({ file: join(out, name + '.js'), format: 'es', inlineDynamicImports: true, plugins: [terser()] });
    await bundle.close();
  }
  return out;
}
