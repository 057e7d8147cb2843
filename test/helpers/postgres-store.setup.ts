import { afterAll } from 'vitest';
import { dropTestDatabases } from './test-store.js';

// The postgres project's test files each leave no database behind.
afterAll(async () => {
  await dropTestDatabases();
}, 60_000);
