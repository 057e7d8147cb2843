import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPrivilegedConnection, quoteLiteral } from '../../src/service/engine/duckdb.js';
import { ResultReader } from '../../src/service/queries/result-reader.js';
import { tempDir } from '../helpers/temp.js';

describe('ResultReader', () => {
  const files: string[] = [];
  const reader = new ResultReader();
  beforeAll(async () => {
    const dir = tempDir('lake-reader');
    const { connection, close } = await openPrivilegedConnection();
    for (let i = 0; i < 20; i++) {
      const file = join(dir, `r${i}.parquet`);
      await connection.run(
        `COPY (SELECT range AS n, 'row ' || range AS label FROM range(${5000 + i})) TO ${quoteLiteral(file)} (FORMAT parquet)`,
      );
      files.push(file);
    }
    close();
  });
  afterAll(async () => {
    await reader.close();
  });

  it('serves front-to-back pages of any size from one stream, exactly in order', async () => {
    const seen: number[] = [];
    let offset = 0;
    for (const limit of [1, 999, 2048, 7, 1000, 1000, 1000, 1000]) {
      const page = await reader.page(files[0] as string, offset, limit);
      seen.push(...page.rows.map((r) => r.n as number));
      offset += page.rows.length;
      if (page.rows.length < limit) break;
    }
    expect(seen).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    expect((await reader.page(files[0] as string, 5000, 10)).rows).toEqual([]);
  });

  it('answers any offset, jumping back and forth, and keeps more results open than it caches', async () => {
    for (const offset of [4321, 17, 2500, 17, 4999]) {
      const page = await reader.page(files[1] as string, offset, 3);
      expect(page.rows.map((r) => r.n)).toEqual([offset, offset + 1, offset + 2].filter((n) => n < 5001));
      expect(page.columns).toEqual(['n', 'label']);
    }
    // More interleaved readers than cursors kept: evicted ones reopen where they were.
    const offsets = files.map(() => 0);
    for (let round = 0; round < 3; round++) {
      for (let f = 0; f < files.length; f++) {
        const page = await reader.page(files[f] as string, offsets[f] as number, 100);
        expect(page.rows[0]?.n).toBe(offsets[f]);
        offsets[f] = (offsets[f] as number) + page.rows.length;
      }
    }
  });

  it('two readers at the same place each get the same rows', async () => {
    const [a, b] = await Promise.all([
      reader.page(files[2] as string, 100, 50),
      reader.page(files[2] as string, 100, 50),
    ]);
    expect(a.rows).toEqual(b.rows);
    expect(a.rows[0]).toEqual({ n: 100, label: 'row 100' });
  });

  it('keeps a JSON page under its byte budget: large rows make a shorter page, and the next page continues', async () => {
    const file = join(tempDir('lake-reader-large'), 'large.parquet');
    const { connection, close } = await openPrivilegedConnection();
    // Six rows of 5 MB each, in one row group: three fit a 16 MB page.
    await connection.run(
      `COPY (SELECT range AS n, repeat(chr(97 + range::INTEGER), 5000000) AS s FROM range(6)) TO ${quoteLiteral(file)} (FORMAT parquet)`,
    );
    close();
    const first = await reader.page(file, 0, 100);
    expect(first.rows.map((r) => r.n)).toEqual([0, 1, 2]);
    const second = await reader.page(file, 3, 100);
    expect(second.rows.map((r) => r.n)).toEqual([3, 4, 5]);
    expect((second.rows[0]?.s as string).length).toBe(5_000_000);
  });
});
