import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { streamRowBatches } from '../../src/service/syncs/pg-row-stream.js';
import { ADMIN_URL } from '../helpers/postgres.js';

/**
 * A statement's rows read as they arrive, a bounded number of bytes at a time, on a real PostgreSQL: the server is
 * made to wait while a batch is worked on, so 64 MB of 256 KB rows taken by a slow consumer are never held at once
 * (node-postgres alone keeps every row until the statement ends).
 */
describe('streamRowBatches', () => {
  let client: pg.Client | undefined;
  afterEach(async () => {
    await client?.end().catch(() => undefined);
    client = undefined;
  });
  const connect = async (): Promise<pg.Client> => {
    client = new pg.Client({ connectionString: ADMIN_URL });
    client.on('error', () => {});
    await client.connect();
    return client;
  };
  const ROWS = `SELECT g AS n, repeat(chr(65 + g % 26), 262144) AS body FROM generate_series(1, 256) g`;
  const size = (row: { body: string }): number => row.body.length;

  it('hands every row on, in order, in batches of about the high-water mark while the consumer is slow', async () => {
    const connection = await connect();
    const batches: number[] = [];
    const seen: number[] = [];
    for await (const batch of streamRowBatches<{ n: number; body: string }>(connection, ROWS, size, 4 << 20)) {
      batches.push(batch.reduce((sum, row) => sum + size(row), 0));
      for (const row of batch) {
        seen.push(row.n);
        expect(row.body).toBe(String.fromCharCode(65 + (row.n % 26)).repeat(262144));
      }
      // Slower than the server at first: without the pause, the rest of the 64 MB would pile up meanwhile.
      await new Promise((resolve) => setTimeout(resolve, batches.length === 1 ? 1500 : 10));
    }
    expect(seen).toEqual(Array.from({ length: 256 }, (_, i) => i + 1));
    // At most the high-water mark and what was in flight when the socket paused (a few rows of 256 KB).
    expect(Math.max(...batches)).toBeLessThanOrEqual((4 << 20) + 8 * 262144);
    expect(batches.length).toBeGreaterThan(10);
    // The connection is usable after the statement.
    expect((await connection.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it("a statement's error ends the stream with it", async () => {
    const connection = await connect();
    const read = async (): Promise<void> => {
      for await (const batch of streamRowBatches(
        connection,
        'SELECT 1 / (3 - g) FROM generate_series(1, 5) g',
        () => 1,
        1,
      ))
        expect(batch.length).toBeGreaterThan(0);
    };
    await expect(read()).rejects.toThrow(/division by zero/);
  });

  it('a consumer that stops early closes the connection instead of letting the rest pile up', async () => {
    const connection = await connect();
    const ended = new Promise<void>((resolve) => connection.once('end', () => resolve()));
    let taken = 0;
    for await (const batch of streamRowBatches<{ n: number; body: string }>(connection, ROWS, size, 1 << 20)) {
      taken += batch.length;
      if (taken >= 4) break;
    }
    await ended;
    expect(taken).toBeLessThan(256);
  });
});
