import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestMysqlDatabase } from '../helpers/mysql.js';
import { ownerApi, startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

type Json = Record<string, any>;

/**
 * A MariaDB source's incremental sync killed (SIGKILL) while it reads: the table keeps its last snapshot, the cursor
 * is not moved on, and the next sync brings every changed row once: nothing lost, nothing doubled.
 */
describe('a MariaDB sync whose process dies mid-table', () => {
  const db = useTestMysqlDatabase();
  let server: ServeProcess | undefined;
  afterAll(async () => {
    await server?.stop('SIGKILL');
  });

  it('leaves the previous snapshot intact, and the next sync merges every change once', async () => {
    await db.query(
      `CREATE TABLE big (id bigint PRIMARY KEY, payload text NOT NULL, amount decimal(12,2), updated_at bigint NOT NULL);
       INSERT INTO big SELECT seq, REPEAT(MD5(seq), 4), seq / 100, 1 FROM seq_1_to_600000;`,
    );
    const home = join(tempDir('lake-mysql-crash'), 'home');
    const env = { LAKE_HOME: home, LAKE_JOB_LEASE_SECONDS: '1' };
    server = await startServeProcess(env);
    const { api, ended, firstRow } = ownerApi(home, () => server as ServeProcess);
    const lake = (): Promise<Json> =>
      firstRow(
        'select count(*) as n, count(distinct id) as ids, sum(updated_at)::INTEGER as cursor_sum from lake.crash.big',
      );

    const source = await api('/sources', {
      method: 'POST',
      body: JSON.stringify({
        connector: 'mysql',
        name: 'Crash',
        config: { port: db.port, database: db.database },
        host: db.host,
        user: db.reader,
      }),
    });
    await api(`/sources/${source.id}`, {
      method: 'PATCH',
      body: JSON.stringify({
        tables: [{ schema: db.database, name: 'big', mode: 'incremental', cursor_column: 'updated_at' }],
      }),
    });
    const first = await api(`/sources/${source.id}/sync`, { method: 'POST', body: '{}' });
    expect(await ended(first.id)).toMatchObject({ status: 'succeeded' });
    expect(await lake()).toEqual({ n: 600000, ids: 600000, cursor_sum: 600000 });

    // A third of the rows change and more arrive; the next sync dies while it reads them.
    await db.query(
      `UPDATE big SET updated_at = 2, payload = REPEAT('z', 200) WHERE id % 3 = 0;
       INSERT INTO big SELECT seq, 'new', 1, 2 FROM seq_600001_to_650000;`,
    );
    const second = await api(`/sources/${source.id}/sync`, { method: 'POST', body: '{}' });
    for (let i = 0; i < 600; i++) {
      const summary = (await api(`/sources/${source.id}`)).latest_sync as Json;
      if (summary?.tables?.[0]?.phase === 'extracting' && summary.tables[0].completed > 0) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await server.stop('SIGKILL');

    server = await startServeProcess(env);
    expect(await lake()).toEqual({ n: 600000, ids: 600000, cursor_sum: 600000 });
    expect(await ended(second.id)).toMatchObject({ status: 'failed', error: { code: 'worker_lost' } });

    const third = await api(`/sources/${source.id}/sync`, { method: 'POST', body: '{}' });
    expect(await ended(third.id)).toMatchObject({ status: 'succeeded' });
    // 650,000 rows once each; 250,000 of them at cursor 2 (200,000 changed, 50,000 new).
    expect(await lake()).toEqual({ n: 650000, ids: 650000, cursor_sum: 400000 + 2 * 250000 });
  }, 180_000);
});
