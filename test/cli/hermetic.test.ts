import { userInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';

/**
 * After `lake auth login`, or with LAKE_BASE_URL exported in the shell, `npm test` once ran its commands against
 * the user's service. The suite's setup removes LAKE_* and XDG_* and gives it a HOME of its own.
 */
describe('the test suite is hermetic', () => {
  it("sees none of the user's lake settings, and its commands go to no profile of theirs", async () => {
    expect(Object.keys(process.env).filter((k) => k.startsWith('LAKE_') && k !== 'LAKE_TEST_PG_URL')).toEqual([]);
    expect(process.env.HOME).not.toBe(userInfo().homedir);
    const status = await runLake(['auth', 'status', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ mode: 'local', base_url: null });
    expect(JSON.parse(status.stdout).home).not.toContain(userInfo().homedir);
  });
});
