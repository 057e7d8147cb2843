import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { IOStreams } from '../../src/render/iostreams.js';
import { Capture } from '../helpers/streams.js';
import { runLake } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait-for.js';
import { sourceCreateArgs } from '../helpers/source-args.js';

/** A terminal's standard input: raw mode is switched as readline asks, keys are what the test types. */
function terminalInput(): PassThrough & { isTTY: boolean; setRawMode: (on: boolean) => void; raw: boolean[] } {
  const input = new PassThrough() as PassThrough & {
    isTTY: boolean;
    setRawMode: (on: boolean) => void;
    raw: boolean[];
  };
  input.isTTY = true;
  input.raw = [];
  input.setRawMode = (on: boolean) => void input.raw.push(on);
  return input;
}

describe('the hidden password prompt on a terminal', () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    db = await createTestDatabase();
    const root = tempDir('lake-prompt');
    env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config'), HOME: root };
  }, 60_000);
  afterAll(async () => {
    await db?.drop();
  });

  const create = (
    name: string,
    stdin: PassThrough,
    extra: string[] = [],
  ): { exit: Promise<number>; out: Capture; err: Capture } => {
    const out = new Capture(true);
    const err = new Capture(true);
    const io = new IOStreams(out, err, stdin, env);
    const args = [
      ...sourceCreateArgs('postgres', name, {
        host: '127.0.0.1',
        port: db.port,
        database: db.database,
        user: db.reader,
      }),
      ...extra,
      '--json',
    ];
    return { exit: main(['node', 'lake', ...args], io, env), out, err };
  };

  it('asks for the password without echoing it, and the source keeps it (it crashed before any prompt)', async () => {
    const stdin = terminalInput();
    const run = create('prompted', stdin);
    await waitFor(
      () => run.err.text,
      (text) => text.includes('Password: '),
      { timeoutMs: 2000, intervalMs: 20 },
    );
    expect(run.err.text).toContain('Password: ');
    stdin.write('typed-secret-42\r');
    expect(await run.exit).toBe(0);
    expect(JSON.parse(run.out.text).credentials).toEqual({ host: 'set', user: 'set', password: 'set' });
    expect(run.err.text + run.out.text).not.toContain('typed-secret-42');
    expect(stdin.raw).toContain(true);
  });

  it('^C at the prompt creates nothing and exits 130', async () => {
    const stdin = terminalInput();
    const run = create('interrupted', stdin);
    await waitFor(
      () => run.err.text,
      (text) => text.includes('Password: '),
      { timeoutMs: 2000, intervalMs: 20 },
    );
    stdin.write('\x03');
    expect(await run.exit).toBe(130);
    const listed = await runLake(['sources', 'ls', '--json'], { env });
    expect(listed.stdout).not.toContain('interrupted');
  });

  it('in a pipe, without --password-stdin or --no-password, is a usage error instead of a source with no password', async () => {
    const piped = await runLake(
      [
        ...sourceCreateArgs('postgres', 'piped', {
          host: '127.0.0.1',
          port: db.port,
          database: db.database,
          user: db.reader,
        }),
      ],
      { env, input: '' },
    );
    expect(piped.code).toBe(2);
    expect(piped.stderr).toMatch(/--password-stdin.*--no-password|--no-password/s);
    const none = await runLake(
      [
        ...sourceCreateArgs('postgres', 'trusting', {
          host: '127.0.0.1',
          port: db.port,
          database: db.database,
          user: db.reader,
        }),
        '--no-password',
        '--json',
      ],
      { env, input: '' },
    );
    expect(none.code, none.stderr).toBe(0);
    expect(JSON.parse(none.stdout).credentials).toEqual({ host: 'set', user: 'set' });
  });
});
