import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { runOnTerminal } from '../helpers/terminal.js';
import { tempDir } from '../helpers/temp.js';

const WIDE_SQL = `select ${Array.from({ length: 15 }, (_, i) => (i === 0 ? 'n as id' : i === 14 ? "'2026-11-22' as last_column" : `repeat('x', ${10 + i}) as column_${i}`)).join(', ')} from range(3) t(n)`;

describe('output on a terminal', () => {
  const home = join(tempDir('lake-terminal'), 'home');

  for (const columns of [60, 100, 200]) {
    it(`a 15-column table fits a ${columns}-column terminal`, async () => {
      const run = await runOnTerminal(['--home', home, 'query', WIDE_SQL], { columns, rows: 40 });
      expect(run.code, run.screen).toBe(0);
      const table = run.screen.split('\n').filter((line) => /^[┌│├└]/.test(line));
      expect(table.length).toBeGreaterThanOrEqual(7);
      for (const line of table) expect([...line].length, line).toBeLessThanOrEqual(columns);
      expect(table[1]).toMatch(/^│ +id │/);
      expect(table[1]).toMatch(/last_column +│$/);
      if (columns < 200) expect(run.screen).toMatch(/\d+ of 15 columns hidden/);
    }, 60_000);
  }

  it('long output goes through the pager on a terminal, never in a pipe, and not with --no-pager', async () => {
    const dir = tempDir('lake-pager');
    const paged = join(dir, 'paged.txt');
    const env = { LAKE_PAGER: `cat > ${paged}` };
    const sql = 'select n, n * n as square from range(50) t(n)';
    const terminal = await runOnTerminal(['--home', home, 'query', sql], { columns: 100, rows: 10, env });
    expect(terminal.code, terminal.screen).toBe(0);
    expect(readFileSync(paged, 'utf8')).toMatch(/│ +49 │ +2401 │/);
    expect(terminal.screen).not.toContain('2401');

    const pipe = join(dir, 'pipe.txt');
    const piped = await runLake(['--home', home, 'query', sql], { env: { LAKE_PAGER: `cat > ${pipe}` } });
    expect(piped.code).toBe(0);
    expect(existsSync(pipe)).toBe(false);
    expect(piped.stdout).toContain('49,2401');

    const unpaged = join(dir, 'unpaged.txt');
    const off = await runOnTerminal(['--home', home, '--no-pager', 'query', sql], {
      columns: 100,
      rows: 10,
      env: { LAKE_PAGER: `cat > ${unpaged}` },
    });
    expect(off.screen).toMatch(/│ +49 │ +2401 │/);
    expect(existsSync(unpaged)).toBe(false);

    const missing = await runOnTerminal(['--home', home, 'query', sql], {
      columns: 100,
      rows: 10,
      env: { LAKE_PAGER: 'no-such-pager-anywhere' },
    });
    expect(missing.screen).toMatch(/│ +49 │ +2401 │/);

    const short = join(dir, 'short.txt');
    const one = await runOnTerminal(['--home', home, 'query', 'select 1 as a'], {
      columns: 100,
      rows: 10,
      env: { LAKE_PAGER: `cat > ${short}` },
    });
    expect(one.screen).toMatch(/│ +1 │/);
    expect(existsSync(short)).toBe(false);
  }, 120_000);

  it('--output vertical on a terminal: one record per block', async () => {
    const run = await runOnTerminal(
      ['--home', home, '--no-pager', 'query', "select 1 as id, 'Ada' as name", '--output', 'vertical'],
      { columns: 80, rows: 40 },
    );
    expect(run.screen).toMatch(/-\[ RECORD 1 \]-+\nid +\| 1\nname +\| Ada/);
  }, 60_000);
});
