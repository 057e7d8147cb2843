import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Runs before every test file: the tests never see the user's lake settings. LAKE_* variables (but the test
 * database's URL) and XDG_* directories are removed, and HOME points at a folder of the tests' own, so neither a
 * profile saved by `lake auth login` nor the user's default lake can decide where a test's command goes.
 */
for (const key of Object.keys(process.env)) {
  if ((key.startsWith('LAKE_') && key !== 'LAKE_TEST_PG_URL') || key.startsWith('XDG_')) delete process.env[key];
}
const testHome = mkdtempSync(join(tmpdir(), 'lake-test-user-'));
process.env.HOME = testHome;
// Removed when the file's tests are done (a forked test worker is ended without its 'exit' handlers): what the CLI
// helper's commands kept under it goes too.
afterAll(() => rmSync(testHome, { recursive: true, force: true }));
