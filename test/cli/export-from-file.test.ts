import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCsv, runLake } from '../helpers/cli.js';
import { startServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

/** Every type the engine hands back, so a row read from the result file is compared with the same row of a page. */
const MIXED = `select range as i, range * 1.25 as dec, range % 3 = 0 as flag, case when range % 5 = 0 then null else 'v' || range::varchar end as text,
  TIMESTAMP '2024-01-01 00:00:00' + to_seconds(range) as at, DATE '2024-01-01' + (range % 400)::int as day,
  [range, range + 1] as list, {'a': range, 'b': 'x'} as rec, 12345678901234567890::hugeint + range as big,
  to_hours(range % 30) as span, 'quote "me", please' as quoted
  from range(5000)`;

/** Only types DuckDB writes as text exactly as lake does, so CSV and TSV are made by DuckDB: every awkward string. */
const TEXT_EXACT = `select range as i, (range - 2500)::bigint * 3689348814741910 as big, range % 2 = 0 as flag,
  (range * 1.25)::decimal(12, 2) as dec, case range % 4 when 0 then DATE '-0044-03-15' when 1 then 'infinity'::date else DATE '2024-02-29' + range::int end as day,
  case range % 9 when 0 then null when 1 then '' when 2 then 'a,b' when 3 then 'say "hi"' when 4 then 'two' || chr(10) || 'lines'
    when 5 then ' lead' when 6 then 'trail' || chr(160) when 7 then 'tab' || chr(9) || 'back\slash' else 'plain ' || range::varchar end as text
  from range(5000)`;

describe('large results come from the result file', () => {
  it('removes its private copy of the file when the reader stops early (| head)', async () => {
    const tmp = tempDir('lake-export-tmp');
    const home = tempDir('lake-export-stop');
    const lake = join(process.cwd(), 'bin/lake.js');
    const shell = (command: string): Promise<number | null> =>
      new Promise((resolve) => {
        const child = spawn('/bin/sh', ['-c', command], {
          env: { PATH: process.env.PATH, TMPDIR: tmp, LAKE_HOME: home },
          stdio: 'ignore',
        });
        child.once('exit', resolve);
      });
    expect(await shell(`"${process.execPath}" "${lake}" query "select 1"`)).toBe(0);
    // head takes two lines and leaves: lake's next write meets a closed pipe.
    await shell(`"${process.execPath}" "${lake}" query "select * from range(300000)" --output csv | head -2`);
    expect(readdirSync(tmp).filter((name) => name.startsWith('lake-result-'))).toEqual([]);
  }, 60_000);

  it('CSV and TSV written by DuckDB for text-exact types equal what the pages print', async () => {
    const env = { LAKE_HOME: tempDir('lake-export-text') };
    for (const output of ['csv', 'tsv']) {
      const whole = await runLake(['query', TEXT_EXACT, '--output', output], { env });
      expect(whole.code, whole.stderr).toBe(0);
      const paged = await runLake(['query', TEXT_EXACT, '--output', output, '--max-rows', '1000'], { env });
      expect(paged.code, paged.stderr).toBe(0);
      expect(whole.stdout.startsWith(paged.stdout), output).toBe(true);
      if (output === 'csv') expect(parseCsv(whole.stdout)).toHaveLength(5001);
      else expect(whole.stdout.trimEnd().split('\n')).toHaveLength(5001);
    }
  }, 120_000);

  it('prints the same rows, in every format, as the pages would (the first 1,000 compared to a paged read)', async () => {
    const env = { LAKE_HOME: tempDir('lake-export-file') };
    for (const output of ['csv', 'json', 'ndjson', 'tsv']) {
      const whole = await runLake(['query', MIXED, '--output', output], { env });
      expect(whole.code, whole.stderr).toBe(0);
      const paged = await runLake(['query', MIXED, '--output', output, '--max-rows', '1000'], { env });
      expect(paged.code, paged.stderr).toBe(0);
      if (output === 'csv') {
        const rows = parseCsv(whole.stdout);
        expect(rows).toHaveLength(5001);
        expect(rows.slice(0, 1001)).toEqual(parseCsv(paged.stdout));
      } else if (output === 'json') {
        const rows = JSON.parse(whole.stdout) as unknown[];
        expect(rows).toHaveLength(5000);
        expect(rows.slice(0, 1000)).toEqual(JSON.parse(paged.stdout));
      } else {
        const lines = whole.stdout.trimEnd().split('\n');
        const pagedLines = paged.stdout.trimEnd().split('\n');
        expect(lines.slice(0, pagedLines.length)).toEqual(pagedLines);
        expect(lines.length).toBe(output === 'tsv' ? 5001 : 5000);
      }
    }
  }, 120_000);

  it('against lake serve, a 60,000-row export is one download, not sixty page requests', async () => {
    const home = join(tempDir('lake-export-serve'), 'home');
    const server = await startServeProcess({ LAKE_HOME: home });
    try {
      const token = readFileSync(join(home, 'owner.token'), 'utf8').trim();
      const result = await runLake(['query', 'select range as i from range(60000)', '--output', 'csv'], {
        env: { LAKE_BASE_URL: server.url, LAKE_TOKEN: token, LAKE_CONFIG_DIR: tempDir('lake-export-config') },
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trimEnd().split('\n')).toHaveLength(60_001);
      const requests = server.logLines().filter((l) => l.msg === 'request');
      const pages = requests.filter((l) => String(l.path).startsWith('/queries/') && l.method === 'GET');
      expect(requests.filter((l) => String(l.path).startsWith('/files/results/'))).toHaveLength(1);
      expect(pages.length).toBeLessThan(5);
    } finally {
      await server.stop();
    }
  }, 60_000);
});
