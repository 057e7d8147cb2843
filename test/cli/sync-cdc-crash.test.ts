import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGICAL_REPLICATION, startPrivatePostgres, type PrivatePostgres } from '../helpers/postgres.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';
import { runLake } from '../helpers/cli.js';

type Json = Record<string, any>;

/**
 * kill -9 of the process applying a cdc table's changes, at different moments (reading the slot, converting,
 * committing, after the commit and before the slot moves on): the next sync ends with the table equal to the
 * source, no row lost or doubled.
 */
describe('a cdc sync whose process is killed', () => {
  let server: PrivatePostgres;
  let source: pg.Client;
  let lake: ServeProcess | undefined;
  beforeAll(async () => {
    server = await startPrivatePostgres(LOGICAL_REPLICATION);
    source = new pg.Client({ connectionString: server.url });
    await source.connect();
    await source.query(
      `CREATE TABLE public.events (id int PRIMARY KEY, v text, payload text);
       INSERT INTO public.events SELECT g, 'v' || g, repeat(md5(g::text), 8) FROM generate_series(1, 50000) g;`,
    );
  }, 120_000);
  afterAll(async () => {
    await lake?.stop('SIGKILL');
    await source?.end();
    await server?.stop();
  });

  it('ends equal after kills at every step', async () => {
    const home = join(tempDir('lake-cdc-crash'), 'home');
    const env = { LAKE_HOME: home, LAKE_JOB_LEASE_SECONDS: '1' };
    lake = await startServeProcess(env);
    const token = readFileSync(join(home, 'owner.token'), 'utf8').trim();
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    const api = async (path: string, init: RequestInit = {}): Promise<Json> =>
      (await (await fetch(`${(lake as ServeProcess).url}${path}`, { ...init, headers })).json()) as Json;
    const ended = async (id: string): Promise<Json> => {
      for (let i = 0; i < 1200; i++) {
        const job = await api(`/jobs/${id}`);
        if (job.status !== 'queued' && job.status !== 'running') return job;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`sync ${id} never ended`);
    };
    const created = await api('/sources', {
      method: 'POST',
      body: JSON.stringify({
        connector: 'postgres',
        name: 'crashing',
        config: { port: Number(new URL(server.url).port), database: 'postgres' },
        host: 'localhost',
        user: 'postgres',
      }),
    });
    await api(`/sources/${created.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ tables: [{ schema: 'public', name: 'events', mode: 'cdc' }] }),
    });
    const syncNow = async (): Promise<Json> => {
      const accepted = await api(`/sources/${created.id}/sync`, { method: 'POST', body: '{}' });
      expect(accepted.object, JSON.stringify(accepted)).toBe('sync');
      return ended(accepted.id as string);
    };
    expect(await syncNow()).toMatchObject({ status: 'succeeded' });
    /** The lake's rows against the source's: count, distinct keys, and a digest of every row. */
    const expectEqual = async (): Promise<void> => {
      const want = (
        await source.query(
          `SELECT count(*)::int AS n, count(DISTINCT id)::int AS ids, md5(string_agg(id || ':' || v || ':' || md5(payload), ',' ORDER BY id)) AS digest FROM public.events`,
        )
      ).rows[0];
      const query = await api('/queries', {
        method: 'POST',
        body: JSON.stringify({
          sql: `select count(*)::int as n, count(distinct id)::int as ids, md5(string_agg(id || ':' || v || ':' || md5(payload), ',' order by id)) as digest from lake.crashing.events`,
        }),
      });
      const got = (await api(`/queries/${query.id}?wait=30&format=inline`)).data?.[0];
      expect(got).toEqual(want);
    };
    await expectEqual();
    for (const [round, delayMs] of [60, 150, 300, 500, 800, 1200].entries()) {
      await source.query(
        `INSERT INTO public.events SELECT g, 'r${round}', repeat('x', 100) FROM generate_series(${100000 + round * 1000}, ${100000 + round * 1000 + 999}) g;
         UPDATE public.events SET v = 'u${round}' WHERE id % 7 = ${round};
         DELETE FROM public.events WHERE id % 11 = ${round};`,
      );
      const accepted = await api(`/sources/${created.id}/sync`, { method: 'POST', body: '{}' });
      await new Promise((r) => setTimeout(r, delayMs));
      await lake.stop('SIGKILL');
      lake = await startServeProcess(env);
      // The killed sync ends (worker_lost, once its lease runs out) or had ended; then one more sync runs whole.
      await ended(accepted.id as string);
      expect(await syncNow()).toMatchObject({ status: 'succeeded' });
      await expectEqual();
    }
  }, 240_000);

  it('lake sync start --follow shows the changes applied per table and where the slot is', async () => {
    const root = tempDir('lake-cdc-cli');
    const env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
    const lakeCli = (args: string[]) => runLake(args, { env });
    const created = await lakeCli([
      'sources',
      'create',
      '--connector',
      'postgres',
      '--name',
      'followed',
      '--config',
      'host=localhost',
      '--config',
      `port=${new URL(server.url).port}`,
      '--config',
      'database=postgres',
      '--config',
      'user=postgres',
      '--no-password',
      '--json',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const id = JSON.parse(created.stdout).id as string;
    const cdc = await lakeCli(['sources', 'update', id, '--cdc', 'public.events']);
    expect(cdc.code, cdc.stderr).toBe(0);
    expect(cdc.stdout).toMatch(/public\.events,true,cdc,/);
    expect((await lakeCli(['sync', 'start', id, '--follow'])).code).toBe(0);
    await source.query(
      `INSERT INTO public.events VALUES (900001, 'followed', 'p');
       UPDATE public.events SET v = 'followed' WHERE id = 900001;
       UPDATE public.events SET v = 'again' WHERE id = (SELECT min(id) FROM public.events);
       DELETE FROM public.events WHERE id = (SELECT max(id) FROM public.events WHERE id < 900000);`,
    );
    const followed = await lakeCli(['sync', 'start', id, '--follow']);
    expect(followed.code, followed.stderr).toBe(0);
    expect(followed.stdout).toMatch(/public\.events committed [\d,]+\/[\d,]+, 1 inserted, 2 updated, 1 deleted/);
    expect(followed.stderr).toMatch(
      new RegExp(`lake: cdc slot lake_${id} at [0-9A-F]+/[0-9A-F]+, keeping [\\d.]+ MB of WAL`),
    );
    const shown = await lakeCli(['sources', 'get', id]);
    expect(shown.stdout).toMatch(new RegExp(`cdc slot\tlake_${id} at `));
  }, 120_000);
});
