// Loads the CLI bundle (dist/bundle.cjs) with V8's code cache (dist/bundle.cache), made by `npm run build` on this
// machine's Node: V8 then skips parsing and compiling most of the bundle on every start (docs/performance.md).
// Node 20 offers no code cache for ES modules, which is why the bundle is CommonJS. A cache that does not fit
// (another Node, changed flags) is rejected by V8 and the bundle compiles as usual: slower, never wrong.
// CommonJS itself (bin/package.json), as bin/lake.js is: see there.
'use strict';
const { readFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { dirname, join } = require('node:path');
const { pathToFileURL } = require('node:url');
const vm = require('node:vm');

const BUNDLE = join(__dirname, '..', 'dist', 'bundle.cjs');
const CODE_CACHE = join(__dirname, '..', 'dist', 'bundle.cache');
const DIST_URL = pathToFileURL(dirname(BUNDLE) + '/');

/**
 * The bundle's dynamic imports (ES-only packages such as Ink, and dist/render/sync-view.js) go through this
 * function: a script compiled by vm can only import() with an experimental loader option that warns on stderr.
 */
function importForBundle(specifier) {
  return import(specifier.startsWith('.') ? new URL(specifier, DIST_URL).href : specifier);
}

function loadBundle(options = {}) {
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

module.exports = { BUNDLE, CODE_CACHE, loadBundle };
