import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/postgres.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

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
    server = await startPrivatePostgres(['wal_level=logical', 'max_replication_slots=4', 'max_wal_senders=4']);
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
});
