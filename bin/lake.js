#!/usr/bin/env node
// Kept tiny on purpose: everything, including the heavy parts, loads from the build only when a command needs it.
// CommonJS (bin/package.json): Node starts a CommonJS entry without setting up its ES module loader, ~5 ms of every
// command (docs/performance.md).
'use strict';
const { loadBundle } = require('./bundle-loader.js');

// main never throws: it prints any failure and returns the exit code.
void loadBundle()
  .exports.main(process.argv, undefined, undefined, { ownsProcess: true })
  .then((code) => {
    process.exitCode = code;
  });
