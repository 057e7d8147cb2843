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

/**
 * Runs a CommonJS file compiled with the V8 code cache in `cacheFile` when it fits: the CLI bundle, and the source
 * drivers' bundles (src/support/source-drivers-bundled.ts). Returns the file's exports, and the script the build
 * makes the cache from. `extra` names more parameters the file is given beside CommonJS's own.
 */
function runWithCodeCache(file, cacheFile, options = {}) {
  let cachedData;
  if (options.useCache !== false) {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      cachedData = undefined;
    }
  }
  const extra = options.extra ?? {};
  const params = ['exports', 'require', 'module', '__filename', '__dirname', ...Object.keys(extra)];
  const script = new vm.Script(`(function (${params.join(', ')}) {${readFileSync(file, 'utf8')}\n})`, {
    filename: file,
    cachedData,
  });
  const module = { exports: {} };
  const requireInFile = options.require ?? createRequire(file);
  script.runInThisContext()(module.exports, requireInFile, module, file, dirname(file), ...Object.values(extra));
  return {
    exports: module.exports,
    script,
    cacheRejected: cachedData === undefined || script.cachedDataRejected === true,
  };
}

function loadBundle(options = {}) {
  return runWithCodeCache(BUNDLE, CODE_CACHE, { useCache: options.useCache, extra: { __lakeImport: importForBundle } });
}

module.exports = { BUNDLE, CODE_CACHE, loadBundle, runWithCodeCache };
