import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hermeticHome, LAKE_BIN, runLake } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** A `lake` on PATH (as an installed one would be), for the completion script to call back. */
function lakeOnPath(): string {
  const dir = tempDir('lake-bin');
  const wrapper = join(dir, 'lake');
  writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${LAKE_BIN}" "$@"\n`);
  chmodSync(wrapper, 0o755);
  return dir;
}

describe('shell completion', () => {
  const home = join(tempDir('lake-complete'), 'home');
  const bin = lakeOnPath();

  /** What bash offers for `words` with the cursor at the end of the last one, through the printed script. */
  const complete = (script: string, words: string[]): string[] => {
    const file = join(tempDir('lake-completion'), 'lake.bash');
    writeFileSync(file, script);
    const quoted = words.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(' ');
    const out = execFileSync(
      'bash',
      [
        '-c',
        `source "${file}"; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _lake_complete; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      {
        env: { PATH: `${bin}:${process.env.PATH}`, HOME: hermeticHome(), LAKE_HOME: home },
        encoding: 'utf8',
      },
    );
    return out.split('\n').filter(Boolean);
  };

  it('bash: commands, subcommands, flags and flag values from the program; names from the lake', async () => {
    const script = await runLake(['completion', 'bash']);
    expect(script.code).toBe(0);
    expect(script.stdout).toContain('complete -o default -F _lake_complete lake');
    expect(complete(script.stdout, ['lake', 'sour'])).toEqual(['sources']);
    expect(complete(script.stdout, ['lake', 'sources', ''])).toEqual(
      expect.arrayContaining(['ls', 'create', 'update', 'delete']),
    );
    expect(complete(script.stdout, ['lake', 'jobs', 'li'])).toEqual(['list']);
    expect(complete(script.stdout, ['lake', 'query', '--output', 'n'])).toEqual(['ndjson']);
    expect(complete(script.stdout, ['lake', 'query', '--max'])).toEqual(['--max-rows']);
    expect(complete(script.stdout, ['lake', 'sources', 'create', '--connector', ''])).toEqual([
      'postgres',
      'mysql',
      'sample',
    ]);
    const created = await runLake(
      ['--home', home, 'sources', 'create', '--connector', 'sample', '--name', 'Demo Shop'],
      { timeoutMs: 60_000 },
    );
    expect(created.code, created.stderr).toBe(0);
    expect(complete(script.stdout, ['lake', 'sync', 'start', ''])).toEqual(['Demo\\ Shop']);
    expect(complete(script.stdout, ['lake', 'help', ''])).not.toContain('__complete');
  }, 120_000);

  it('zsh and fish scripts call the same completer; another shell is a usage error', async () => {
    expect((await runLake(['completion', 'zsh'])).stdout).toMatch(
      /#compdef lake[\s\S]*lake __complete --[\s\S]*compdef _lake_complete lake/,
    );
    expect((await runLake(['completion', 'fish'])).stdout).toMatch(/complete -c lake -f -a '\(lake __complete -- /);
    const other = await runLake(['completion', 'tcsh']);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/bash, zsh and fish/);
  });
});
