import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCsv, runLake } from '../helpers/cli.js';
import { startOnTerminal } from '../helpers/terminal.js';
import { tempDir } from '../helpers/temp.js';

/** SQL scripts: several statements in a file, on stdin, piped to lake sql and typed in it, run one after another. */
describe('SQL scripts', () => {
  const dir = tempDir('lake-scripts');
  const home = join(dir, 'home');
  const env = { LAKE_HOME: home };
  const script = [
    '-- a report in three statements',
    'select 1 as a;',
    "select 'semi;colon' as b, $$dollar; quoted$$ as c; /* a comment; with a semicolon */",
    '',
    'select 3 as d',
  ].join('\n');

  it('reads SQL as UTF-8 whole, a character across two reads of a pipe too, and refuses a file that is not UTF-8', async () => {
    // 90,000 two-byte characters after an odd number of bytes: a read of the pipe (64 KiB) ends inside one.
    const sql = `select length('${'é'.repeat(90_000)}') as n`;
    for (const args of [['query', '-'], ['query']]) {
      const result = await runLake(args, { env, input: sql });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe('n\n90000\n');
    }
    const file = join(dir, 'latin1.sql');
    writeFileSync(file, Buffer.from("select 'caf\xe9' as s", 'latin1'));
    for (const args of [
      ['query', '-f', file],
      ['sends', 'create', '--name', 'x', '--sql-file', file],
    ]) {
      const refused = await runLake([...args, '--json'], { env });
      expect(refused.code, refused.stderr).toBe(2);
      const { error } = JSON.parse(refused.stderr) as { error: { code: string; message: string } };
      expect(error.code).toBe('file_not_utf8');
      expect(error.message).toContain(`${file} is not UTF-8 text`);
      expect(error.message).toContain('0xE9 at byte 12');
    }
    // A password read from standard input is refused the same way, without a byte of it in the message.
    const password = await runLake(
      [
        'sources',
        'create',
        '--connector',
        'postgres',
        '--name',
        'p',
        '--config',
        'host=db.example.com',
        '--config',
        'database=d',
        '--config',
        'user=u',
        '--password-stdin',
        '--json',
      ],
      { env, input: Buffer.from('s\xe9cret\n', 'latin1') },
    );
    expect(password.code, password.stderr).toBe(2);
    expect(password.stderr).toContain('standard input is not UTF-8 text: a byte at byte 2');
    expect(password.stderr).not.toMatch(/0xE9|cret/);
  });

  it('lake query -f FILE, lake query - and piped lake sql run every statement in order, each with its header', async () => {
    const file = join(dir, 'report.sql');
    writeFileSync(file, script);
    for (const args of [['query', '-f', file], ['query', '-'], ['sql']]) {
      const result = await runLake(args, { env, input: args[1] === '-f' ? '' : script });
      expect(result.code, result.stderr).toBe(0);
      expect(parseCsv(result.stdout)).toEqual([
        ['a'],
        ['1'],
        ['b', 'c'],
        ['semi;colon', 'dollar; quoted'],
        ['d'],
        ['3'],
      ]);
    }
  });

  it('--json prints one JSON document per statement', async () => {
    const result = await runLake(['query', '-', '--json'], { env, input: 'select 1 as a; select 2 as b;' });
    expect(result.code, result.stderr).toBe(0);
    const documents = result.stdout
      .trim()
      .split(/\n(?=\[)/)
      .map((text) => JSON.parse(text) as unknown);
    expect(documents).toEqual([[{ a: 1 }], [{ b: 2 }]]);
  });

  it('stops at the first failure, naming its statement and line; --continue-on-error runs the rest; the exit code is the failure’s', async () => {
    const failing = 'select 1 as a;\n\nselect nope;\nselect 3 as c;\n';
    const stopped = await runLake(['query', '-'], { env, input: failing });
    expect(stopped.code).toBe(1);
    expect(parseCsv(stopped.stdout)).toEqual([['a'], ['1']]);
    expect(stopped.stderr).toContain('statement 2 of 3 (line 3) failed; the statements after it were not run');
    expect(stopped.stderr).toContain('nope');

    const onward = await runLake(['query', '-', '--continue-on-error'], { env, input: failing });
    expect(onward.code).toBe(1);
    expect(parseCsv(onward.stdout)).toEqual([['a'], ['1'], ['c'], ['3']]);

    const json = await runLake(['query', '-', '--json', '--continue-on-error'], { env, input: failing });
    expect(json.code).toBe(1);
    const error = JSON.parse(json.stderr.trim().split('\n').pop() as string) as { error: Record<string, string> };
    expect(error.error).toMatchObject({ code: 'query_failed', statement: '2', line: '3' });
  });

  it("a statement's parse error shows DuckDB's LINE and caret, the line counted in the whole script", async () => {
    const lines = Array.from({ length: 9 }, (_, i) => `select ${i + 1} as n${i + 1};`);
    const script = `${lines.join('\n')}\nselect 1,\n  min(at) from range(3);\n`;
    const result = await runLake(['query', '-'], { env, input: script });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('statement 10 of 10 (line 10) failed');
    // LINE 2 of the statement is line 11 of the script; the caret moves one column with the extra digit.
    expect(result.stderr).toContain('LINE 11:   min(at) from range(3)\n                 ^');
  });

  it('empty SQL, or only comments, is a usage error (exit 2)', async () => {
    for (const input of ['', '  -- nothing here\n', ';;']) {
      const result = await runLake(['query', '-'], { env, input });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('There is no SQL to run');
    }
  });

  it('typed in lake sql, two statements on one line run one after the other', async () => {
    const shell = startOnTerminal(['--home', home, 'sql'], { columns: 100, rows: 40 });
    await shell.waitFor(/lake> $/, { timeoutMs: 60_000 });
    const at = shell.length;
    shell.send('select 1 as first_one; select 2 as second_one;\r');
    const screen = await shell.waitFor(/second_one[\s\S]*\(1 row\)[\s\S]*lake> $/, { since: at });
    expect(screen).toMatch(/first_one[\s\S]*\(1 row\)[\s\S]*second_one/);
    shell.send('\\q\r');
    expect(await shell.exited).toBe(0);
  }, 120_000);

  it('the shell: \\d alone lists relations, \\d name finds the one table, a multi-line statement is one history entry', async () => {
    const shell = startOnTerminal(['--home', home, 'sql'], { columns: 100, rows: 40 });
    await shell.waitFor(/lake> $/, { timeoutMs: 60_000 });
    let at = shell.length;
    shell.send('\\d\r');
    await shell.waitFor(/demo\.orders[\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send('\\d orders\r');
    await shell.waitFor(/lake\.demo\.orders \(table\)[\s\S]*column[\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send('\\d no_such_table\r');
    await shell.waitFor(/No table or view named no_such_table[\s\S]*lake> $/, { since: at });
    at = shell.length;
    shell.send('select 1 as x,\r');
    await shell.waitFor(/ {3}-> $/, { since: at });
    shell.send('  2 as y;\r');
    await shell.waitFor(/\(1 row\)[\s\S]*lake> $/, { since: at });
    shell.send('\\q\r');
    expect(await shell.exited).toBe(0);
    const history = readFileSync(join(home, 'sql_history'), 'utf8').split('\n');
    expect(history).toContain('select 1 as x, 2 as y;');
    expect(history).not.toContain('  2 as y;');
  }, 120_000);

  it("the shell's footer for a table too wide says \\x, the shell's word, not a command-line flag", async () => {
    const shell = startOnTerminal(['--home', home, 'sql'], { columns: 50, rows: 30 });
    await shell.waitFor(/lake> $/, { timeoutMs: 60_000 });
    const at = shell.length;
    shell.send(
      "select 'aaaaaaaaaaaa' as a, 'bbbbbbbbbbbb' as b, 'cccccccccccc' as c, 'dddddddddddd' as d, 'eeeeeeeeeeee' as e;\r",
    );
    const screen = await shell.waitFor(/columns hidden[\s\S]*lake> $/, { since: at });
    expect(screen).toContain('\\x shows them all');
    expect(screen).not.toContain('--output vertical');
    shell.send('\\q\r');
    expect(await shell.exited).toBe(0);
  }, 120_000);
});
