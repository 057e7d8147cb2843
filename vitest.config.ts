import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    // The user's HOME, profiles and LAKE_* variables never reach a test.
    setupFiles: ['test/helpers/hermetic.ts'],
    // Native modules (SQLite, DuckDB) are safest in child processes rather than worker threads.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
