#!/usr/bin/env node
// Kept tiny on purpose: everything, including the heavy parts, loads from the build only when a command needs it.
import { main } from '../dist/bundle.js';

process.exitCode = await main(process.argv);
