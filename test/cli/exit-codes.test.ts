import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/commands/exit-codes.js';
import { LAKE_BIN, runLake, type CliResult } from '../helpers/cli.js';
import { SLOW_SQL } from '../helpers/queries.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait-for.js';

/** README's exit-code table, row by row: `| 3    | meaning |` → 3. */
function readmeExitCodes(): number[] {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const table = readme.split('## Exit codes')[1]?.split('\n## ')[0] ?? '';
  return [...table.matchAll(/^\|\s*(\d+)\s*\|/gm)].map((m) => Number(m[1]));
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * README's exit-code table is what the commands do: every code it lists is produced by the case it describes,
 * and the CLI has no code README does not list.
 */
describe('README exit codes', () => {
  const root = tempDir('lake-exit-codes');
  const env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
  const lake = (...args: string[]): Promise<CliResult> => runLake(args, { env });
  let server: ServeProcess;
  let token: string;
  beforeAll(async () => {
    token = (JSON.parse((await lake('init', '--json')).stdout) as { token: { secret: string } }).token.secret;
    server = await startServeProcess({ LAKE_HOME: env.LAKE_HOME });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });
  const remote = (...args: string[]): Promise<CliResult> =>
    runLake(['--base-url', server.url, '--token', token, ...args], { env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR } });

  it('lists exactly the codes the CLI uses', () => {
    expect(readmeExitCodes()).toEqual(Object.values(EXIT));
  });

  it('each code comes from the case README gives for it', async () => {
    const seen = new Map<number, string>();
    const expectExit = (result: CliResult, code: number, what: string): void => {
      expect(result.code, `${what}: ${result.stderr}`).toBe(code);
      seen.set(code, what);
    };
    expectExit(await lake('query', 'select 42'), EXIT.ok, 'success');
    expectExit(await lake('query', 'select * from no_such_table'), EXIT.failed, 'an API error');
    expectExit(await lake('jobs', 'get', 'qr_doesnotexist'), EXIT.failed, 'not found');
    expectExit(await lake('no-such-command'), EXIT.usage, 'unknown command');
    expectExit(await lake('query', 'select 1', '--output', 'xml'), EXIT.usage, 'bad flag value');
    expectExit(await lake('config', 'use', 'nope'), EXIT.usage, 'unknown profile');

    const running = await remote('query', '--wait', '1', SLOW_SQL);
    expectExit(running, EXIT.stillRunning, 'query --wait against a service');
    const id = running.stdout.trim();
    expect(id).toMatch(/^qr_/);
    expectExit(await remote('query', 'poll', id), EXIT.stillRunning, 'query poll of a running query');
    expect((await remote('jobs', 'cancel', id)).code).toBe(0);

    expectExit(
      await runLake(['--base-url', server.url, '--token', `pat_${'x'.repeat(40)}`, 'whoami'], {
        env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR },
      }),
      EXIT.auth,
      'invalid credential',
    );
    const closed = await freePort();
    expectExit(
      await runLake(['--base-url', `http://127.0.0.1:${closed}`, '--token', token, 'whoami'], {
        env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR },
        timeoutMs: 30_000,
      }),
      EXIT.unavailable,
      'connection refused',
    );

    const child = spawn(process.execPath, [LAKE_BIN, 'query', SLOW_SQL], {
      env: { PATH: process.env.PATH ?? '', HOME: root, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // ^C once the query runs (its job says so), not after a time that hopes it does.
    const localQueryRunning = async (): Promise<boolean> =>
      (
        JSON.parse((await runLake(['jobs', 'ls', '--json'], { env })).stdout || '{"data":[]}') as {
          data: { id: string; kind: string; status: string }[];
        }
      ).data.some((job) => job.kind === 'query' && job.status === 'running' && job.id !== id);
    expect(await waitFor(localQueryRunning, Boolean, 30_000)).toBe(true);
    child.kill('SIGINT');
    expect(await exited).toBe(EXIT.interrupted);
    seen.set(EXIT.interrupted, '^C');

    expect([...seen.keys()].sort((a, b) => a - b)).toEqual(readmeExitCodes());
  }, 90_000);

  it('a token no HTTP header can carry is said at once, locally and remotely, never retried as a lost connection', async () => {
    const local = await runLake(['whoami'], { env: { ...env, LAKE_TOKEN: 'pat_secret\nline' } });
    const remoteRun = await runLake(['--base-url', server.url, '--token', 'pat_secret😀', 'whoami'], {
      env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR },
    });
    for (const result of [local, remoteRun]) {
      expect(result.code, result.stderr).toBe(EXIT.usage);
      expect(result.stderr).toContain('invalid_header_value');
      expect(result.stderr).toContain('The token holds a character an HTTP header cannot carry');
      expect(result.stderr).not.toContain('retrying');
      expect(result.stderr).not.toContain('pat_secret');
    }
  });

  it('an empty id or name is a usage error, locally and remotely, not a request for the list it would name', async () => {
    // `lake jobs get ''` asked for GET /jobs/, which local mode answered as GET /jobs (a list printed as one job).
    for (const args of [
      ['jobs', 'get', ''],
      ['catalog', 'ls', ''],
      ['jobs', 'cancel', ''],
    ]) {
      for (const result of [await lake(...args), await remote(...args)]) {
        expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(EXIT.usage);
        expect(result.stderr).toMatch(/^error empty_parameter: /);
        expect(result.stderr).not.toContain('route_not_found');
        expect(result.stdout).toBe('');
      }
    }
  });

  it('a base URL that holds credentials is refused as such, without them, never tried', async () => {
    const result = await runLake(['--base-url', server.url.replace('://', '://someone:hunter2@'), 'whoami'], {
      env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR },
    });
    expect(result.code, result.stderr).toBe(EXIT.usage);
    expect(result.stderr).toContain('invalid_base_url');
    expect(result.stderr).toContain('holds a user name or password');
    expect(result.stderr).not.toContain('hunter2');
    expect(result.stderr).not.toContain('retrying');
  });

  it('an id that names nothing says where the ids are listed', async () => {
    const cases: [string[], string, string][] = [
      [['query', 'download', 'qr_doesnotexist'], 'query_not_found', '`lake query ls`'],
      [['jobs', 'get', 'sync_doesnotexist'], 'job_not_found', '`lake jobs ls`'],
      [['sources', 'get', 'src_doesnotexist'], 'source_not_found', '`lake sources ls`'],
      [['catalog', 'describe', 'nowhere.nothing'], 'catalog_not_found', '`lake catalog ls`'],
      [['pats', 'revoke', 'pat_doesnotexist'], 'pat_not_found', '`lake pats ls`'],
    ];
    for (const [args, code, where] of cases) {
      const result = await lake(...args);
      expect(result.code, args.join(' ')).toBe(EXIT.failed);
      expect(result.stderr).toContain(`error ${code}: `);
      expect(result.stderr).toMatch(/request id: req_/);
      expect(result.stderr).toMatch(new RegExp(`hint: +.*${where.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    }
  });
});
