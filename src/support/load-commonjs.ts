import { createRequire } from 'node:module';

/**
 * Loads a CommonJS package with require. An ESM `import` of CommonJS makes Node lex every re-exported file to
 * find named exports: for DuckDB's package that alone costs ~50 ms of start-up, which `lake query` pays each run.
 */
export const requireCommonJs = createRequire(import.meta.url);
