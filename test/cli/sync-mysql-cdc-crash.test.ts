import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivateMariadb, type PrivateMariadb } from '../helpers/mysql.js';
import { ownerApi, startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

type Json = Record<string, any>;

/**
 * A MariaDB cdc sync whose process is killed (SIGKILL) while it reads the binary log, and again while it commits
 * the changes: the table keeps its last snapshot and position, and the next sync applies every change once.
 */
describe('a MariaDB cdc sync whose process dies mid-change', () => {
  let mariadb: PrivateMariadb;
  let server: ServeProcess | undefined;
  beforeAll(async () => {
    mariadb = await startPrivateMariadb();
    await mariadb.query(
      `CREATE DATABASE shop; CREATE USER reader@'%';
       GRANT SELECT ON shop.* TO reader@'%'; GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO reader@'%';`,
    );
    await mariadb.query(
      `CREATE TABLE big (id bigint PRIMARY KEY, payload varchar(64) NOT NULL, amount decimal(12,2));
       INSERT INTO big SELECT seq, MD5(seq), seq / 100 FROM seq_1_to_200000;`,
      'shop',
    );
  }, 120_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await mariadb?.stop();
  });

  it('leaves the table at a position it has wholly applied, and the next sync applies every change once', async () => {
    const home = join(tempDir('lake-mysql-cdc-crash'), 'home');
    const env = { LAKE_HOME: home, LAKE_JOB_LEASE_SECONDS: '1' };
    server = await startServeProcess(env);
    const { api, ended, firstRow } = ownerApi(home, () => server as ServeProcess);
    const summarySql = `select count(*) as n, count(distinct id) as ids, sum(amount)::VARCHAR as amount,
                               count(*) filter (where payload = 'changed') as changed`;
    const lake = (): Promise<Json> => firstRow(`${summarySql} from lake.binlog.big`);
    const source = async (): Promise<Json> => {
      const [row] = (await mariadb.query(
        `SELECT count(*) AS n, count(distinct id) AS ids, CAST(sum(amount) AS CHAR) AS amount,
                CAST(sum(payload = 'changed') AS SIGNED) AS changed FROM big`,
        'shop',
      )) as Record<string, unknown>[];
      return { n: Number(row?.n), ids: Number(row?.ids), amount: String(row?.amount), changed: Number(row?.changed) };
    };
    /** Starts a sync and kills the server once its table reaches `phase` (with changes read, when extracting). */
    const killedAt = async (sourceId: string, phase: string): Promise<string> => {
      const sync = await api(`/sources/${sourceId}/sync`, { method: 'POST', body: '{}' });
      for (let i = 0; i < 3000; i++) {
        const table = ((await api(`/sources/${sourceId}`)).latest_sync as Json)?.tables?.[0];
        if (table?.phase === phase && (phase !== 'extracting' || table.completed > 0)) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      await (server as ServeProcess).stop('SIGKILL');
      server = await startServeProcess(env);
      return sync.id as string;
    };

    const created = await api('/sources', {
      method: 'POST',
      body: JSON.stringify({
        connector: 'mysql',
        name: 'Binlog',
        config: { port: mariadb.port, database: 'shop' },
        host: mariadb.host,
        user: 'reader',
      }),
    });
    await api(`/sources/${created.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ tables: [{ schema: 'shop', name: 'big', mode: 'cdc' }] }),
    });
    const first = await api(`/sources/${created.id}/sync`, { method: 'POST', body: '{}' });
    expect(await ended(first.id)).toMatchObject({ status: 'succeeded' });
    expect(await lake()).toEqual(await source());

    let cut = 0;
    for (const phase of ['extracting', 'loading']) {
      await mariadb.query(
        `UPDATE big SET payload = 'changed', amount = amount + 1 WHERE id % 3 = 0;
         DELETE FROM big WHERE id % 7 = 0;
         INSERT INTO big SELECT seq + 1000000 * ${phase.length}, 'new', 1 FROM seq_1_to_20000;`,
        'shop',
      );
      const before = await lake();
      const killed = await killedAt(created.id as string, phase);
      const job = await ended(killed);
      // A kill may land just after the commit on a loaded machine: the sync then succeeded (checked below that at
      // least one kill cut a sync).
      if (job.status !== 'succeeded') {
        expect(job).toMatchObject({ status: 'failed', error: { code: 'worker_lost' } });
        cut++;
      }
      // All of the changes or none of them: the table as the last sync left it, or (killed just after its commit)
      // as the source is.
      expect([before, await source()]).toContainEqual(await lake());
      const next = await api(`/sources/${created.id}/sync`, { method: 'POST', body: '{}' });
      expect(await ended(next.id)).toMatchObject({ status: 'succeeded' });
      expect(await lake()).toEqual(await source());
    }
    expect(cut).toBeGreaterThan(0);
  }, 240_000);
});
