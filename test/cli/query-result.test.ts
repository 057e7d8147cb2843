import {} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

describe('lake query result', () => {
  const home = join(tempDir('lake-result'), 'home');
  const lake = (...args: string[]) => runLake(['--home', home, ...args], { timeoutMs: 60_000 });
  const latestJob = async (): Promise<string> =>
    (
      (JSON.parse((await lake('jobs', 'ls', '--json', '--limit', '1')).stdout) as { data: { id: string }[] })
        .data[0] as { id: string }
    ).id;

  it("prints a finished query's rows again, every page, in any format", async () => {
    const first = await lake('query', 'select n, n * 2 as twice from range(2500) t(n) order by n', '--output', 'csv');
    expect(first.code, first.stderr).toBe(0);
    const id = await latestJob();
    const again = await lake('query', 'result', id, '--output', 'csv');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(first.stdout);
    expect(again.stdout.trim().split('\n')).toHaveLength(2501);
    const json = await lake('query', 'result', id, '--output', 'json', '--max-rows', '3');
    expect(JSON.parse(json.stdout)).toEqual([
      { n: 0, twice: 0 },
      { n: 1, twice: 2 },
      { n: 2, twice: 4 },
    ]);
  }, 120_000);

  it('a failed query says why (exit 1); an unknown id is query_not_found', async () => {
    const failed = await lake('query', 'select * from nowhere.nothing');
    expect(failed.code).toBe(1);
    const id = await latestJob();
    const result = await lake('query', 'result', id);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/query_failed/);
    const unknown = await lake('query', 'result', 'qr_00000000000000000000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/query_not_found/);
  }, 120_000);
});
