import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { loadDuckDB, openAhead, openPrivilegedConnection } from '../../src/service/engine/duckdb.js';

/**
 * A write's instance opened ahead (openAhead): the next privileged connection with the same options takes it,
 * one with other options does not, and one no write took is closed when let go. Instances are counted where
 * DuckDB's module makes them.
 */
describe('a DuckDB instance opened ahead of its write', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lake-open-ahead-'));
  const options = { tempDirectory: join(dir, 'spill') };
  afterEach(() => vi.restoreAllMocks());
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const counted = async () => vi.spyOn((await loadDuckDB()).DuckDBInstance, 'create');
  const answer = async (opened: Awaited<ReturnType<typeof openPrivilegedConnection>>): Promise<unknown> =>
    (await opened.connection.runAndReadAll('SELECT 42 AS n')).getRowObjectsJS()[0]?.n;

  it('is taken by the next connection with the same options, and kept when let go after', async () => {
    const created = await counted();
    const release = openAhead(options);
    const opened = await openPrivilegedConnection(options);
    expect(created).toHaveBeenCalledTimes(1);
    release();
    expect(await answer(opened)).toBe(42);
    opened.close();
    // Taken once: the next connection has an instance of its own.
    const next = await openPrivilegedConnection(options);
    expect(created).toHaveBeenCalledTimes(2);
    next.close();
  });

  it('is not taken by a connection with other options, and is closed when let go untaken', async () => {
    const created = await counted();
    const release = openAhead(options);
    const other = await openPrivilegedConnection({ ...options, memoryLimit: '64MB' });
    expect(created).toHaveBeenCalledTimes(2);
    other.close();
    release();
    // Let go: the same options now open an instance of their own.
    const fresh = await openPrivilegedConnection(options);
    expect(created).toHaveBeenCalledTimes(3);
    expect(await answer(fresh)).toBe(42);
    fresh.close();
  });

  it('waits one at a time: a second ask while one waits opens nothing more', async () => {
    const created = await counted();
    const release = openAhead(options);
    const again = openAhead(options);
    again();
    const opened = await openPrivilegedConnection(options);
    expect(created).toHaveBeenCalledTimes(1);
    release();
    expect(await answer(opened)).toBe(42);
    opened.close();
  });

  it("loads DuckDB's library on another thread, in a process that has not loaded it, however often asked", () => {
    // A fresh process of the build (this one may have loaded DuckDB already): the library is mapped once the
    // preload resolves, without the main thread loading DuckDB's module.
    const module = pathToFileURL(fileURLToPath(new URL('../../dist/service/engine/duckdb.js', import.meta.url))).href;
    const script = `
      const { readFileSync } = await import('node:fs');
      const mapped = () => readFileSync('/proc/self/maps', 'utf8').includes('libduckdb');
      const engine = await import(${JSON.stringify(module)});
      const before = mapped();
      // The thread does not hold the process open (a CLI that is done exits): this script does, until it is loaded.
      const open = setInterval(() => undefined, 1000);
      await Promise.all([engine.preloadDuckDBLibrary(), engine.preloadDuckDBLibrary()]);
      clearInterval(open);
      console.log(JSON.stringify({ before, after: mapped() }));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ before: false, after: true });
  });
});
