import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminQuery, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

type Json = Record<string, any>;

describe('a sync whose process dies mid-table', () => {
  let db: TestDatabase;
  let server: ServeProcess | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    await adminQuery(
      `CREATE TABLE public.big (id bigint PRIMARY KEY, payload text NOT NULL, amount numeric(12,2));
       INSERT INTO public.big SELECT g, repeat(md5(g::text), 4), g / 100.0 FROM generate_series(1, 1500000) g;
       ANALYZE public.big; GRANT SELECT ON public.big TO ${db.reader};`,
      db.database,
    );
  }, 120_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await db?.drop();
  });

  it('leaves the previous snapshot intact and queryable, and the next sync succeeds', async () => {
    const home = join(tempDir('lake-sync-crash'), 'home');
    const env = { LAKE_HOME: home, LAKE_JOB_LEASE_SECONDS: '1' };
    server = await startServeProcess(env);
    const token = readFileSync(join(home, 'owner.token'), 'utf8').trim();
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    const api = async (path: string, init: RequestInit = {}): Promise<Json> =>
      (await (await fetch(`${(server as ServeProcess).url}${path}`, { ...init, headers })).json()) as Json;
    const waitFor = async (syncId: string, done: (job: Json) => boolean): Promise<Json> => {
      for (let i = 0; i < 600; i++) {
        const job = await api(`/jobs/${syncId}`);
        if (done(job)) return job;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`sync ${syncId} never got there`);
    };
    const count = async (): Promise<Json> => {
      const query = await api('/queries', {
        method: 'POST',
        body: JSON.stringify({ sql: 'select count(*) as n, max(id) as top from lake.crash.big' }),
      });
      return (await api(`/queries/${query.id}?wait=30&format=inline`)).data[0];
    };

    const source = await api('/sources', {
      method: 'POST',
      body: JSON.stringify({
        connector: 'postgres',
        name: 'Crash',
        config: { port: db.port, database: db.database },
        host: db.host,
        user: db.reader,
      }),
    });
    await api(`/sources/${source.id}`, {
      method: 'PATCH',
      body: JSON.stringify({
        tables: source.tables.map((t: Json) => ({ schema: 'public', name: t.name, enabled: t.name === 'big' })),
      }),
    });
    const first = await api(`/sources/${source.id}/sync`, { method: 'POST', body: '{}' });
    expect(await waitFor(first.id, (j) => j.status !== 'queued' && j.status !== 'running')).toMatchObject({
      status: 'succeeded',
    });
    expect(await count()).toEqual({ n: 1500000, top: 1500000 });

    // More rows at the source; the next sync dies while it is extracting them.
    await adminQuery(
      'INSERT INTO public.big SELECT g, md5(g::text), 1 FROM generate_series(1500001, 1600000) g',
      db.database,
    );
    const second = await api(`/sources/${source.id}/sync`, { method: 'POST', body: '{}' });
    for (let i = 0; i < 600; i++) {
      const summary = (await api(`/sources/${source.id}`)).latest_sync as Json;
      if (summary?.tables?.[0]?.phase === 'extracting' && summary.tables[0].completed > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await server.stop('SIGKILL');

    server = await startServeProcess(env);
    // The previous snapshot is intact and queryable, and the dead sync is not left running.
    expect(await count()).toEqual({ n: 1500000, top: 1500000 });
    expect(await waitFor(second.id, (j) => j.status !== 'running')).toMatchObject({
      status: 'failed',
      error: { code: 'worker_lost' },
    });

    const third = await api(`/sources/${source.id}/sync`, { method: 'POST', body: '{}' });
    expect(third.object, JSON.stringify(third)).toBe('sync');
    expect(await waitFor(third.id, (j) => j.status !== 'queued' && j.status !== 'running')).toMatchObject({
      status: 'succeeded',
    });
    expect(await count()).toEqual({ n: 1600000, top: 1600000 });
  }, 120_000);
});
