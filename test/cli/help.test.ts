import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT_VARIABLES } from '../../src/config/environment.js';
import { runLake } from '../helpers/cli.js';

const root = new URL('../..', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory()
      ? sourceFiles(path)
      : path.endsWith('.ts') || path.endsWith('.tsx')
        ? [path]
        : [];
  });
}

describe('help that teaches', () => {
  it("lists every LAKE_* variable the code reads, the same as README's table", () => {
    const listed = ENVIRONMENT_VARIABLES.map((v) => v.name);
    const read = new Set(
      sourceFiles(join(root, 'src')).flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/\bLAKE_[A-Z0-9_]+\b/g)].map((m) => m[0]),
      ),
    );
    expect([...read].filter((name) => !listed.includes(name)).sort()).toEqual([]);
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const rows = [...readme.matchAll(/^\| `(LAKE_[A-Z0-9_]+)` \| [^|]+ \| ([^|]+) \| ([^|]+) \|$/gm)].map((m) => ({
      name: m[1],
      meaning: m[2]!.trim(),
      default: m[3]!.trim(),
    }));
    expect(rows).toEqual(ENVIRONMENT_VARIABLES.map((v) => ({ name: v.name, meaning: v.meaning, default: v.default })));
  });

  it('lake help environment prints them with their defaults; lake help <command> its help; both exit 0', async () => {
    const environment = await runLake(['help', 'environment']);
    expect(environment.code).toBe(0);
    for (const v of ENVIRONMENT_VARIABLES) expect(environment.stdout).toContain(v.name);
    expect(environment.stdout).toContain('LAKE_QUERY_TIMEOUT_SECONDS');
    expect(environment.stdout).toMatch(/default: 300/);
    const sync = await runLake(['help', 'sync', 'start']);
    expect(sync.code).toBe(0);
    expect(sync.stdout).toMatch(/Usage: lake sync start/);
    const unknown = await runLake(['help', 'nothing']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no command 'nothing'/);
  });

  it('lake version works; lake alone prints the help on stdout with exit 0', async () => {
    const version = await runLake(['version']);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^lake \d+\.\d+\.\d+ \(node \d+/);
    const json = await runLake(['version', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ object: 'version', version: expect.any(String) });
    const bare = await runLake([]);
    expect(bare.code).toBe(0);
    expect(bare.stdout).toMatch(/Usage: lake/);
    expect(bare.stdout).toMatch(/query/);
  });

  it('a group alone prints its help as lake alone does; a usage mistake is said as every error is', async () => {
    // `lake sources` is asking what the group does (as gh, docker and kubectl answer): help on stdout, success.
    const group = await runLake(['sources']);
    expect(group.code).toBe(0);
    expect(group.stdout).toMatch(/^Usage: lake sources/);
    expect(group.stderr).toBe('');
    // Commander's own mistakes carry the code and a hint like every other error, not `error: …` alone.
    const misspelt = await runLake(['quer', 'select 1']);
    expect(misspelt.code).toBe(2);
    expect(misspelt.stdout).toBe('');
    expect(misspelt.stderr).toBe(
      "error usage: unknown command 'quer'\n  hint:       Did you mean query? Run the command with --help for its usage.\n",
    );
    const option = await runLake(['jobs', 'ls', '--nosuch']);
    expect(option.code).toBe(2);
    expect(option.stderr).toBe(
      "error usage: unknown option '--nosuch'\n  hint:       Run the command with --help for its usage.\n",
    );
    const json = await runLake(['--json', 'quer']);
    expect(JSON.parse(json.stderr)).toEqual({
      error: {
        type: 'cli_error',
        code: 'usage',
        message: "unknown command 'quer'",
        hint: 'Did you mean query? Run the command with --help for its usage.',
      },
      exit_code: 2,
    });
  });
});

describe('listings', () => {
  it('every ls also answers to list, the spelling docker and kubectl take', async () => {
    const ls = await runLake(['sources', 'ls']);
    const list = await runLake(['sources', 'list']);
    expect(ls.code).toBe(0);
    expect(list).toEqual(ls);
    const help = await runLake(['catalog', 'list', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: lake catalog ls\|list/);
  });
});

describe('examples in every help', () => {
  it('every command, group and the program itself end their help with 1 to 3 examples of lake', async () => {
    const { buildProgram } = await import('../../src/cli.js');
    const { CommandContext } = await import('../../src/commands/context.js');
    const { IOStreams } = await import('../../src/render/iostreams.js');
    const { commandPath, EXAMPLES } = await import('../../src/commands/examples.js');
    const sink = { write: () => true };
    const program = buildProgram(
      new CommandContext(new IOStreams(sink as never, sink as never, process.stdin, {}), {}),
    );
    const missing: string[] = [];
    const visit = (command: typeof program): void => {
      const examples = EXAMPLES[commandPath(command)];
      if (!examples || examples.length < 1 || examples.length > 3 || !examples.every((e) => /\blake\b/.test(e)))
        missing.push(commandPath(command) || '(lake)');
      command.commands.forEach(visit);
    };
    visit(program);
    expect(missing).toEqual([]);
    const help = await runLake(['sources', 'create', '--help']);
    expect(help.stdout).toMatch(/Examples:\n {2}\$ lake sources create --connector postgres/);
  });
});
