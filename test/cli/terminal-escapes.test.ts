import {} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { runOnTerminal } from '../helpers/terminal.js';
import { tempDir } from '../helpers/temp.js';

const ESC = '\x1b';
const BEL = '\x07';
// A value that, printed raw, writes the clipboard (OSC 52) and clears the screen; a column name that sets the
// window title (OSC 0).
const SQL = `select chr(27) || ']52;c;cHduZWQ=' || chr(7) || chr(27) || '[2J' as "${ESC}]0;pwned${BEL}", 'plain' as ok`;

/** Finding 10: names and values with escape sequences reached the terminal and acted on it. */
describe('control characters from data never act on the terminal', () => {
  const home = join(tempDir('lake-escapes'), 'home');

  for (const output of ['table', 'vertical']) {
    it(`a ${output} on a terminal shows them escaped`, async () => {
      const run = await runOnTerminal(['--home', home, 'query', SQL, '--output', output], { columns: 200, rows: 40 });
      expect(run.code, run.screen).toBe(0);
      expect(run.raw).not.toContain(`${ESC}]`);
      expect(run.raw).not.toContain(BEL);
      expect(run.raw).not.toContain(`${ESC}[2J`);
      expect(run.screen).toContain('\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J');
      expect(run.screen).toContain('\\x1b]0;pwned\\x07');
    }, 60_000);
  }

  it('an error quoting a name shows it escaped', async () => {
    const run = await runOnTerminal(['--home', home, 'query', `select * from "${ESC}[2Jgone"`], {
      columns: 200,
      rows: 40,
    });
    expect(run.code).not.toBe(0);
    expect(run.raw).not.toContain(`${ESC}[2J`);
    expect(run.screen).toContain('\\x1b[2Jgone');
  }, 60_000);

  it('pipes and --json keep the exact bytes', async () => {
    const csv = await runLake(['--home', home, 'query', SQL, '--output', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).toContain(`${ESC}]52;c;cHduZWQ=${BEL}${ESC}[2J`);
    expect(csv.stdout).toContain(`${ESC}]0;pwned${BEL}`);
    const json = await runLake(['--home', home, 'query', SQL, '--output', 'json']);
    expect(JSON.parse(json.stdout)[0]).toEqual({
      [`${ESC}]0;pwned${BEL}`]: `${ESC}]52;c;cHduZWQ=${BEL}${ESC}[2J`,
      ok: 'plain',
    });
  }, 60_000);
});
