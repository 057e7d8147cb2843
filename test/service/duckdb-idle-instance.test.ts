import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  closeIdleInstance,
  loadDuckDB,
  openAhead,
  openPrivilegedConnection,
  type PrivilegedConnection,
} from '../../src/service/engine/duckdb.js';

/**
 * A write's instance released when the write ends (release): kept warm for the next privileged connection with the
 * same options, on a connection of its own, unless its database still holds anything; never for other options; one
 * at most; closed by closeIdleInstance. Instances are counted where DuckDB's module makes them.
 */
describe('a DuckDB instance released by its write', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lake-idle-instance-'));
  const options = { tempDirectory: join(dir, 'spill'), memoryLimit: '256MB' };
  afterEach(() => {
    closeIdleInstance();
    vi.restoreAllMocks();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const counted = async () => vi.spyOn((await loadDuckDB()).DuckDBInstance, 'create');
  const value = async (opened: PrivilegedConnection, sql: string): Promise<unknown> =>
    (await opened.connection.runAndReadAll(sql)).getRows()[0]?.[0];
  /** An instance-wide setting a write changes: whether the next connection shares the instance. */
  const insertionOrder = (opened: PrivilegedConnection) =>
    value(opened, "SELECT current_setting('preserve_insertion_order')");

  it('is taken by the next connection with the same options, which gets a connection of its own', async () => {
    const created = await counted();
    const first = await openPrivilegedConnection(options);
    await first.connection.run('SET GLOBAL preserve_insertion_order = false');
    await first.connection.run('CREATE TEMP TABLE mine AS SELECT 1 AS n; DROP TABLE mine');
    await first.connection.run("SET VARIABLE left_over = 'first'");
    await first.release();
    const next = await openPrivilegedConnection(options);
    expect(created).toHaveBeenCalledTimes(1);
    expect(await insertionOrder(next)).toBe(false);
    // The first write's connection is gone, and with it what lived on the connection.
    expect(await value(next, "SELECT getvariable('left_over')")).toBeNull();
    next.close();
    // Closed, not released: the next connection opens an instance of its own.
    const fresh = await openPrivilegedConnection(options);
    expect(created).toHaveBeenCalledTimes(2);
    expect(await insertionOrder(fresh)).toBe(true);
    fresh.close();
  });

  it('is closed, not kept, when its database still holds a table, a view or another database', async () => {
    const created = await counted();
    for (const leftBehind of [
      'CREATE TABLE lake_merge_hits AS SELECT 1 AS pos',
      'CREATE VIEW seen AS SELECT 1 AS n',
      'CREATE TEMP TABLE scratch AS SELECT 1 AS n',
      `ATTACH ${`'${join(dir, 'other.duckdb')}'`} AS other`,
    ]) {
      const opened = await openPrivilegedConnection(options);
      await opened.connection.run('SET GLOBAL preserve_insertion_order = false');
      await opened.connection.run(leftBehind);
      await opened.release();
      const next = await openPrivilegedConnection(options);
      expect(await insertionOrder(next), leftBehind).toBe(true);
      expect(await value(next, 'SELECT count(*) FROM duckdb_tables() WHERE NOT internal'), leftBehind).toBe(0n);
      next.close();
    }
    expect(created).toHaveBeenCalledTimes(8);
  });

  it('is not taken by a connection with other options, and one instance is kept at most', async () => {
    const created = await counted();
    const a = await openPrivilegedConnection(options);
    const b = await openPrivilegedConnection(options);
    expect(created).toHaveBeenCalledTimes(2);
    await a.connection.run('SET GLOBAL preserve_insertion_order = false');
    await a.release();
    await b.release();
    const other = await openPrivilegedConnection({ ...options, memoryLimit: '128MB' });
    expect(created).toHaveBeenCalledTimes(3);
    other.close();
    // a was kept, b (released while a waited) closed.
    const kept = await openPrivilegedConnection(options);
    expect(created).toHaveBeenCalledTimes(3);
    expect(await insertionOrder(kept)).toBe(false);
    kept.close();
  });

  it('makes openAhead open nothing while it waits, and is gone once closeIdleInstance closes it', async () => {
    const created = await counted();
    await (await openPrivilegedConnection(options)).release();
    const letGo = openAhead(options);
    expect(created).toHaveBeenCalledTimes(1);
    letGo();
    closeIdleInstance();
    const fresh = await openPrivilegedConnection(options);
    expect(created).toHaveBeenCalledTimes(2);
    expect(await value(fresh, 'SELECT 42')).toBe(42);
    fresh.close();
  });
});
