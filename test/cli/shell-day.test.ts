import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startOnTerminal } from '../helpers/terminal.js';
import { tempDir } from '../helpers/temp.js';

/** The SQL shell as an analyst uses it all day (issue 31): completion, the pager, progress, \i, \e and \o. */
describe('lake sql for a day of work', () => {
  const dir = tempDir('lake-shell-day');
  const home = join(dir, 'home');

  const open = async (env: Record<string, string> = {}, size = { columns: 120, rows: 40 }) => {
    const shell = startOnTerminal(['--home', home, 'sql'], { ...size, env });
    await shell.waitFor(/lake> $/, { timeoutMs: 60_000 });
    return shell;
  };

  it('TAB completes after lake., after an alias, and schema.table.column', async () => {
    const shell = await open();
    let at = shell.length;
    shell.send('select count(*) as n from lake.de\t');
    await shell.waitFor(/from lake\.demo\.$/, { since: at });
    shell.send('ord\t');
    await shell.waitFor(/from lake\.demo\.order$/, { since: at });
    shell.send('\t');
    await shell.waitFor(/lake\.demo\.order_items[\s\S]*lake\.demo\.orders/, { since: at });
    shell.send('s;\r');
    await shell.waitFor(/5,?000[\s\S]*\(1 row\)[\s\S]*lake> $/, { since: at });

    at = shell.length;
    shell.send('select count(*) as n from demo.orders o where o.sta\t');
    await shell.waitFor(/where o\.status$/, { since: at });
    shell.send(" = 'paid';\r");
    await shell.waitFor(/\(1 row\)[\s\S]*lake> $/, { since: at });

    at = shell.length;
    shell.send('select max(demo.orders.custo\t');
    await shell.waitFor(/max\(demo\.orders\.customer_id$/, { since: at });
    shell.send(') as top from demo.orders;\r');
    await shell.waitFor(/top[\s\S]*500[\s\S]*\(1 row\)[\s\S]*lake> $/, { since: at });

    // An alias on an earlier line of the statement counts too.
    at = shell.length;
    shell.send('select count(*) from demo.customers as cu\r');
    await shell.waitFor(/ {3}-> $/, { since: at });
    shell.send('where cu.coun\t');
    await shell.waitFor(/where cu\.country$/, { since: at });
    shell.send(" <> '';\r");
    await shell.waitFor(/\(1 row\)[\s\S]*lake> $/, { since: at });
    shell.send('\\q\r');
    expect(await shell.exited).toBe(0);
  }, 180_000);

  it('a result longer than the screen goes through the pager; a table shows at most 1,000 rows, in the shell’s words', async () => {
    const shell = await open({ LAKE_PAGER: 'sed s/^/PAGED:/' }, { columns: 100, rows: 30 });
    let at = shell.length;
    shell.send('select range as n from range(5000);\r');
    const screen = await shell.waitFor(/\(5,000 rows\)[\s\S]*lake> $/, { since: at });
    expect(screen).toMatch(/PAGED:│ +999 │/);
    expect(screen).not.toMatch(/│ +1000 │/);
    expect(screen).toContain('showing the first 1,000 of 5,000 rows; \\o FILE writes all of them to a file');
    // The line editor has the terminal again after the pager.
    at = shell.length;
    shell.send('select 7 as seven;\r');
    const after = await shell.waitFor(/\(1 row\)[\s\S]*lake> $/, { since: at });
    expect(after).toMatch(/│ +7 │/);
    expect(after).not.toContain('PAGED:');
    shell.send('\\q\r');
    expect(await shell.exited).toBe(0);
  }, 180_000);

  it('a statement running past a second shows a spinner with its elapsed time; ^C still cancels it', async () => {
    const shell = await open();
    const at = shell.length;
    shell.send('select max(hash(a.range + b.range)) from range(200000) a, range(100000) b;\r');
    await shell.waitFor(/running qr_\w+ \d+\.\ds/, { since: at, timeoutMs: 30_000 });
    shell.send('\x03');
    await shell.waitFor(/cancell[\s\S]*lake> $/, { since: at, timeoutMs: 30_000 });
    shell.send('\\q\r');
    expect(await shell.exited).toBe(0);
  }, 120_000);

  it('\\o FILE writes results to a file until \\o; \\i runs a file; \\e edits the last statement and runs it', async () => {
    const script = join(dir, 'report.sql');
    writeFileSync(script, "select 'from the file' as origin;\n-- a comment\nselect 2 as second;\n");
    const out = join(dir, 'results.csv');
    const shell = await open({ EDITOR: 'sed -i s/41/42/' });
    let at = shell.length;
    shell.send('\\format csv\r');
    await shell.waitFor(/Output is csv[\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send(`\\o ${out}\r`);
    await shell.waitFor(/Results go to [\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send("select 'x,y' as a, 1 as b;\r");
    await shell.waitFor(/\(1 row written to [\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send('\\o\r');
    await shell.waitFor(/screen[\s\S]*lake> $/, { since: at });
    expect(readFileSync(out, 'utf8')).toBe('a,b\n"x,y",1\n');
    expect(statSync(out).mode & 0o777).toBe(0o600);

    at = shell.length;
    shell.send(`\\i ${script}\r`);
    await shell.waitFor(/from the file[\s\S]*second\r?\n2[\s\S]*lake> $/, { since: at });

    at = shell.length;
    shell.send('select 41 as answer;\r');
    await shell.waitFor(/answer\r?\n41[\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send('\\e\r');
    await shell.waitFor(/select 42 as answer;[\s\S]*answer\r?\n42[\s\S]*lake> $/, { since: at });
    shell.send('\\q\r');
    expect(await shell.exited).toBe(0);
  }, 180_000);
});
