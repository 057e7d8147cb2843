import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAKE_BIN, runLake } from '../helpers/cli.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait-for.js';

const SLOW_SQL = 'select max(hash(a.range + b.range)) from range(200000) a, range(100000) b';

describe('lake jobs', () => {
  let env: Record<string, string>;
  let work: string;
  beforeAll(() => {
    work = tempDir('lake-jobs-cli');
    env = { LAKE_HOME: join(work, 'home'), LAKE_CONFIG_DIR: join(work, 'config') };
  });
  const lake = (...args: string[]) => runLake(args, { env });

  it('ls, get, wait, events and result on the local lake', async () => {
    expect((await lake('query', 'select 7 as seven')).stdout).toBe('seven\n7\n');
    const list = JSON.parse((await lake('jobs', 'ls', '--json')).stdout) as { data: { id: string; status: string }[] };
    const id = list.data[0]?.id as string;
    expect(list.data[0]).toMatchObject({ status: 'succeeded', kind: 'query' });
    expect((await lake('jobs', 'ls')).stdout).toMatch(
      new RegExp(`^id,kind,status,created,duration,sql,error\\n${id},query,succeeded,`),
    );

    const got = await lake('jobs', 'get', id);
    expect(got.stdout).toMatch(/status\tsucceeded/);
    expect((await lake('jobs', 'wait', id)).code).toBe(0);

    // NDJSON only under --json; plain lines that say what happened otherwise, in a pipe too.
    const events = await lake('jobs', 'events', id, '--json');
    expect(events.code).toBe(0);
    const lines = events.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; event: string });
    expect(lines.map((l) => l.event)).toEqual(['job.created', 'job.running', 'job.succeeded']);
    expect(events.stderr).toContain(`job ${id} succeeded`);
    const plain = await lake('jobs', 'events', id);
    expect(plain.code).toBe(0);
    expect(
      plain.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[1]),
    ).toEqual(['job.created', 'job.running', 'job.succeeded']);
    expect(plain.stdout).toMatch(/job\.succeeded .*status=succeeded/);

    const target = join(work, 'seven.parquet');
    expect((await lake('jobs', 'result', id, '-o', target)).code).toBe(0);
    expect(readFileSync(target).subarray(0, 4).toString()).toBe('PAR1');

    expect((await lake('jobs', 'get', 'qr_nope')).code).toBe(1);
    const notCancellable = await lake('jobs', 'cancel', id);
    expect(notCancellable.code).toBe(1);
    expect(notCancellable.stderr).toContain('job_not_cancellable');
    expect((await lake('jobs', 'ls', '--limit', '0')).code).toBe(2);
  });

  it('--all pages through every job and prints one JSON document', async () => {
    for (let i = 0; i < 3; i++) await lake('query', `select ${i}`);
    const all = JSON.parse((await lake('jobs', 'ls', '--all', '--limit', '2', '--json')).stdout) as {
      data: unknown[];
      has_more: boolean;
    };
    expect(all.data.length).toBeGreaterThanOrEqual(4);
    expect(all.has_more).toBe(false);
  });

  it('the first ^C during lake query cancels the query and exits 130', async () => {
    // The jobs there are before it: its own is the new one.
    const before = new Set(
      (JSON.parse((await lake('jobs', 'ls', '--json')).stdout) as { data: { id: string }[] }).data.map((j) => j.id),
    );
    const child = spawn(process.execPath, [LAKE_BIN, 'query', SLOW_SQL], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // ^C once the query runs (its job says so), not after a time that hopes it does.
    const running = async (): Promise<boolean> =>
      (
        JSON.parse((await lake('jobs', 'ls', '--json')).stdout) as {
          data: { id: string; kind: string; status: string }[];
        }
      ).data.some((job) => job.kind === 'query' && job.status === 'running' && !before.has(job.id));
    expect(await waitFor(running, Boolean, 30_000)).toBe(true);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    const id = /cancelling (qr_\w+)/.exec(stderr)?.[1] as string;
    expect(stderr).toContain(`${id} cancelled`);
    const job = JSON.parse((await lake('jobs', 'get', id, '--json')).stdout) as { status: string };
    expect(job.status).toBe('cancelled');
  });

  describe('against lake serve', () => {
    let server: ServeProcess;
    let token: string;
    beforeAll(async () => {
      token = (JSON.parse((await lake('init', '--json')).stdout) as { token: { secret: string } }).token.secret;
      server = await startServeProcess({ LAKE_HOME: env.LAKE_HOME as string });
    });
    afterAll(async () => {
      await server.stop();
    });
    const remote = (...args: string[]) =>
      runLake(['--base-url', server.url, '--token', token, ...args], {
        env: { LAKE_CONFIG_DIR: env.LAKE_CONFIG_DIR as string },
      });

    it('follows a running job live, cancels it from another command, and reports the outcome', async () => {
      const started = await remote('query', '--wait', '0', SLOW_SQL);
      const id = started.stdout.trim();
      expect(id).toMatch(/^qr_/);
      const following = remote('jobs', 'events', id, '--json');
      const waiting = remote('jobs', 'wait', id);
      // Cancelled once it runs (the followers see the same events whether they joined before or after).
      await waitFor(
        async () => JSON.parse((await remote('jobs', 'get', id, '--json')).stdout) as { status: string },
        (job) => job.status === 'running',
      );
      const cancel = await remote('jobs', 'cancel', id, '--json');
      expect(cancel.code).toBe(0);
      expect(JSON.parse(cancel.stdout)).toMatchObject({ object: 'job_cancellation', job: { id } });
      const events = await following;
      expect(events.code).toBe(1);
      expect(
        events.stdout
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { event: string }).event),
      ).toEqual(['job.created', 'job.running', 'job.cancel_requested', 'job.cancelled']);
      expect(events.stderr).toContain(`job ${id} cancelled`);
      const waited = await waiting;
      expect(waited.code).toBe(1);
      expect(waited.stdout).toMatch(/status\tcancelled/);
    });
  });
});
