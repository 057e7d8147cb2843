#!/usr/bin/env node
// Kept tiny on purpose: everything, including the heavy parts, loads from the build only when a command needs it.
import { loadBundle } from './bundle-loader.js';

process.exitCode = await loadBundle().exports.main(process.argv);
