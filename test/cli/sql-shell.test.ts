import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait-for.js';
import { startOnTerminal } from '../helpers/terminal.js';
import { overHttp } from '../helpers/transports.js';
import { tempDir } from '../helpers/temp.js';

describe('lake sql, the interactive shell', () => {
  const home = join(tempDir('lake-shell'), 'home');

  it('runs statements (one or several lines), keeps going after an error, completes names, and has meta-commands', async () => {
    const shell = startOnTerminal(['--home', home, 'sql'], { columns: 120, rows: 40 });
    await shell.waitFor(/lake> $/, { timeoutMs: 60_000 });
    let at = shell.length;
    shell.send('select 41 + 1 as answer;\r');
    expect(await shell.waitFor(/│ +42 │[\s\S]*\(1 row\)[\s\S]*lake> $/, { since: at })).toMatch(/answer/);

    at = shell.length;
    shell.send('select\r');
    await shell.waitFor(/ {3}-> $/, { since: at });
    shell.send("  'two lines' as t;\r");
    await shell.waitFor(/two lines[\s\S]*lake> $/, { since: at });

    at = shell.length;
    shell.send('select * from nowhere_at_all;\r');
    await shell.waitFor(/error[\s\S]*nowhere_at_all[\s\S]*request req_[\s\S]*lake> $/, { since: at });

    at = shell.length;
    // TAB completes the common part of the names that fit; a second TAB lists them.
    shell.send('select count(*) as n from demo.ord\t');
    await shell.waitFor(/from demo\.order/, { since: at });
    shell.send('\t');
    await shell.waitFor(/demo\.orders/, { since: at });
    shell.send('s;\r');
    await shell.waitFor(/\(1 row\)[\s\S]*lake> $/, { since: at });

    at = shell.length;
    shell.send('\\dt demo\r');
    await shell.waitFor(/demo\.orders[\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send('\\d demo.orders\r');
    await shell.waitFor(/lake\.demo\.orders[\s\S]*column[\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send('\\x\r');
    await shell.waitFor(/one record per block[\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send('select 1 as id, 2 as two;\r');
    await shell.waitFor(/-\[ RECORD 1 \][\s\S]*two +\| 2[\s\S]*lake> $/, { since: at });

    shell.send('\\q\r');
    expect(await shell.exited).toBe(0);
    const history = join(home, 'sql_history');
    expect(readFileSync(history, 'utf8')).toContain('select 41 + 1 as answer;');
    expect(statSync(history).mode & 0o777).toBe(0o600);
  }, 180_000);

  it('\\c and USE set the schema unqualified names resolve in; \\set gives $name a value', async () => {
    const shell = startOnTerminal(['--home', home, 'sql'], { columns: 120, rows: 40 });
    await shell.waitFor(/lake> $/, { timeoutMs: 60_000 });
    let at = shell.length;
    shell.send('\\c nowhere\r');
    await shell.waitFor(/No schema nowhere[\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send('\\c demo\r');
    await shell.waitFor(/resolve in demo[\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send('select count(*) as orders_n from orders;\r');
    await shell.waitFor(/5000[\s\S]*\(1 row\)[\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send('\\set top:int 41\r');
    await shell.waitFor(/\$top = 41 \(INTEGER\)[\s\S]*lake> $/, { since: at });
    at = shell.length;
    // Only the values a statement names are sent with it.
    shell.send('select $top + 1 as answer;\r');
    await shell.waitFor(/│ +42 │[\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send('select 7 as seven;\r');
    await shell.waitFor(/│ +7 │[\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send('use lake.demo;\r');
    await shell.waitFor(/resolve in demo[\s\S]*lake> $/, { since: at });
    shell.send('\\q\r');
    expect(await shell.exited).toBe(0);
  }, 120_000);

  it('^C cancels the running query and gives the prompt back; history comes back in the next session; ^C twice quits', async () => {
    const shell = startOnTerminal(['--home', home, 'sql'], { columns: 120, rows: 40 });
    await shell.waitFor(/lake> $/, { timeoutMs: 60_000 });
    let at = shell.length;
    shell.send('select count(*) from range(100000000000) a;\r');
    // ^C once the query runs on the service (its job says so).
    const running = async (): Promise<boolean> =>
      (
        JSON.parse((await runLake(['--home', home, 'jobs', 'ls', '--json'])).stdout || '{"data":[]}') as {
          data: { kind: string; status: string }[];
        }
      ).data.some((job) => job.kind === 'query' && job.status === 'running');
    expect(await waitFor(running, Boolean, 30_000)).toBe(true);
    shell.send('\x03');
    await shell.waitFor(/cancell[\s\S]*lake> $/, { since: at, timeoutMs: 30_000 });
    at = shell.length;
    shell.send('\x1b[A');
    await shell.waitFor(/range\(100000000000\)/, { since: at });
    shell.send('\x03');
    await shell.waitFor(/\^C[\s\S]*lake> $/, { since: at });
    shell.send('\x03');
    await shell.waitFor(/again/, { since: at });
    shell.send('\x03');
    expect(await shell.exited).toBe(0);
    const jobs = JSON.parse((await runLake(['--home', home, 'jobs', 'ls', '--json', '--limit', '1'])).stdout) as {
      data: { status: string }[];
    };
    expect(jobs.data[0]?.status).toBe('cancelled');
  }, 180_000);

  it('^D quits; piped SQL runs like lake query -', async () => {
    const shell = startOnTerminal(['--home', home, 'sql'], { columns: 80, rows: 24 });
    await shell.waitFor(/lake> $/, { timeoutMs: 60_000 });
    shell.send('\x04');
    expect(await shell.exited).toBe(0);
    const piped = await runLake(['--home', home, 'sql'], { input: 'select 7 as seven' });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toBe('seven\n7\n');
    expect(existsSync(join(home, 'sql_history'))).toBe(true);
  }, 120_000);

  it('works the same against lake serve: statements, \\conninfo, history beside the profiles', async () => {
    const api = await overHttp.start();
    const config = tempDir('lake-shell-config');
    try {
      const shell = startOnTerminal(['--base-url', api.baseUrl, '--token', api.home.ownerToken, 'sql'], {
        columns: 100,
        rows: 30,
        env: { LAKE_CONFIG_DIR: config },
      });
      await shell.waitFor(/lake serve at http:\/\/127\.0\.0\.1[\s\S]*lake> $/, { timeoutMs: 60_000 });
      let at = shell.length;
      shell.send('select 6 * 7 as answer;\r');
      await shell.waitFor(/│ +42 │[\s\S]*lake> $/, { since: at });
      at = shell.length;
      shell.send('\\conninfo\r');
      await shell.waitFor(/Connected to lake serve at http:\/\/127\.0\.0\.1[\s\S]*lake> $/, { since: at });
      shell.send('\\q\r');
      expect(await shell.exited).toBe(0);
      expect(readFileSync(join(config, 'sql_history'), 'utf8')).toContain('select 6 * 7 as answer;');
    } finally {
      await api.close();
    }
  }, 120_000);
});
