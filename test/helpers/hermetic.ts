import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
process.on('exit', () => rmSync(testHome, { recursive: true, force: true }));
