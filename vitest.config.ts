import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The user's HOME, profiles and LAKE_* variables never reach a test.
    setupFiles: ['test/helpers/hermetic.ts'],
    // Native modules (SQLite, DuckDB) are safest in child processes rather than worker threads.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.{ts,tsx}'] } },
      // The contract suite again with the metadata on the machine's PostgreSQL, a database per home.
      {
        extends: true,
        test: {
          name: 'postgres',
          include: ['test/contract/**/*.test.ts'],
          env: { TEST_METADATA_STORE: 'postgres' },
          setupFiles: ['test/helpers/postgres-store.setup.ts'],
        },
      },
    ],
  },
});
