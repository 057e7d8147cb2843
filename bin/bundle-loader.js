// Loads the CLI bundle (dist/bundle.cjs) with V8's code cache (dist/bundle.cache), made by `npm run build` on this
// machine's Node: V8 then skips parsing and compiling most of the bundle on every start (docs/performance.md).
// Node 20 offers no code cache for ES modules, which is why the bundle is CommonJS. A cache that does not fit
// (another Node, changed flags) is rejected by V8 and the bundle compiles as usual: slower, never wrong.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';

export const BUNDLE = fileURLToPath(new URL('../dist/bundle.cjs', import.meta.url));
export const CODE_CACHE = fileURLToPath(new URL('../dist/bundle.cache', import.meta.url));
const DIST_URL = pathToFileURL(dirname(BUNDLE) + '/');

/**
 * The bundle's dynamic imports (ES-only packages such as Ink, and dist/render/sync-view.js) go through this ES
 * module: a script compiled by vm can only import() with an experimental loader option that warns on stderr.
 */
function importForBundle(specifier) {
  return import(specifier.startsWith('.') ? new URL(specifier, DIST_URL).href : specifier);
}

export function loadBundle(options = {}) {
  const source = readFileSync(BUNDLE, 'utf8');
  let cachedData;
  if (options.useCache !== false) {
    try {
      cachedData = readFileSync(CODE_CACHE);
    } catch {
      cachedData = undefined;
    }
  }
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname, __lakeImport) {${source}\n})`,
    { filename: BUNDLE, cachedData },
  );
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(BUNDLE), module, BUNDLE, dirname(BUNDLE), importForBundle);
  return {
    exports: module.exports,
    script,
    cacheRejected: cachedData === undefined || script.cachedDataRejected === true,
  };
}
