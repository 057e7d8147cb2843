import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The user's HOME, profiles and LAKE_* variables never reach a test.
    setupFiles: ['test/helpers/hermetic.ts', 'test/helpers/no-warnings.ts'],
    // Native modules (SQLite, DuckDB) are safest in child processes rather than worker threads.
    pool: 'forks',
    // Two test files at a time at least (vitest's own default is one fewer than the cores: one on a 2-core machine,
    // where the suite took ~23 min). Most files wait on real processes and servers; on 2 cores two at a time took
    // 12.9 min with every test passing.
    maxWorkers: Math.max(2, availableParallelism() - 1),
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
