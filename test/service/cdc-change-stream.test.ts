import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stageChanges } from '../../src/service/syncs/cdc/changes.js';
import { SYNC_DEFAULTS } from '../../src/service/syncs/settings.js';
import { StagingBudget } from '../../src/service/syncs/staging-budget.js';
import { LOGICAL_REPLICATION, startPrivatePostgres, type PrivatePostgres } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

/**
 * A slot's change stream is read as it arrives, a bounded part at a time (pg-row-stream.ts), and staged whole and in
 * order. Before, it was fetched 5,000 changes at a time, each FETCH held whole by the driver: 300 changes of 100 KB
 * came as one 30 MB answer, and a run of small changes let the next fetch take 5,000 large ones (5,000 of a source's
 * 60 MB rows would have been 300 GB).
 */
describe("a PostgreSQL slot's change stream", () => {
  let server: PrivatePostgres;
  let source: pg.Client;
  beforeAll(async () => {
    server = await startPrivatePostgres(LOGICAL_REPLICATION);
    source = new pg.Client({ connectionString: server.url });
    await source.connect();
    await source.query(`CREATE TABLE public.docs (id int PRIMARY KEY, body text);
      CREATE PUBLICATION lake_test FOR TABLE public.docs;`);
    await source.query(`SELECT pg_create_logical_replication_slot('lake_test', 'pgoutput')`);
    // Large changes, then small ones, then large ones again.
    const big = (from: number, to: number): string =>
      `INSERT INTO public.docs SELECT g, repeat(md5(g::text), 3200) FROM generate_series(${from}, ${to}) g`;
    await source.query(big(1, 300));
    await source.query(`INSERT INTO public.docs SELECT g, 'small ' || g FROM generate_series(301, 6300) g`);
    await source.query(big(6301, 6600));
  }, 120_000);
  afterAll(async () => {
    await source?.end();
    await server?.stop();
  });

  it('is staged whole and in order when read 1 MiB at a time (the server waits while each part is staged)', async () => {
    const client = new pg.Client({ connectionString: server.url });
    client.on('error', () => {});
    await client.connect();
    try {
      const upto = (await source.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn;
      const dir = tempDir('lake-cdc-stream');
      const { staged, lastEnd } = await stageChanges({
        client,
        slot: 'lake_test',
        publication: 'lake_test',
        upto: upto as string,
        targets: [{ key: 'public.docs', schema: 'public', name: 'docs', from: 0n }],
        stagingDir: dir,
        fileOf: (_key, segment) => join(dir, `${segment}.txt`),
        budget: new StagingBudget(SYNC_DEFAULTS),
        batchBytes: 1 << 20,
      });
      const docs = staged.get('public.docs');
      expect(docs?.inserts).toBe(6600);
      expect(lastEnd).toBeGreaterThan(0n);
      const lines = (docs?.segments ?? []).flatMap((s) => readFileSync(s.file, 'utf8').trimEnd().split('\n'));
      expect(lines).toHaveLength(6600);
      // seq, op, unchanged columns, id, body: in the order they were committed, each body whole.
      lines.forEach((line, i) => {
        const [seq, op, , id, body] = line.split('\t');
        expect([seq, op, id]).toEqual([String(i + 1), 'I', String(i + 1)]);
        expect(body?.length).toBe(i < 300 || i >= 6300 ? 102_400 : `small ${i + 1}`.length);
      });
    } finally {
      await client.end().catch(() => undefined);
    }
  }, 120_000);
});
