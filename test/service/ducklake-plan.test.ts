import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckLakeCatalog } from '../../src/service/storage/ducklake/catalog.js';
import { columnShape } from '../../src/service/storage/ducklake/types.js';
import { SqliteMetadataDb } from '../../src/service/store/sqlite-db.js';

/** Column ids planned before a write (so its files carry them as field ids), and checked again at the commit. */
describe('planning a table’s column ids before writing its files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lake-ducklake-plan-'));
  let db: SqliteMetadataDb;
  let catalog: DuckLakeCatalog;
  beforeAll(async () => {
    db = SqliteMetadataDb.open(join(dir, 'catalog.sqlite'));
    catalog = new DuckLakeCatalog(db, '', 'catalog:org');
    await catalog.initialize(join(dir, 'tables'), 'lake test');
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const commit = (
    shapes: ReturnType<typeof columnShape>[],
    planned?: Awaited<ReturnType<DuckLakeCatalog['planColumns']>>,
  ) =>
    catalog.commit(
      {},
      async (w) => (await w.table(await w.schema('shop'), 'items', 'tbl_1/', shapes, planned)).columns,
    );

  it('the plan is what the commit assigns; a plan made stale by another commit fails, and nothing is written', async () => {
    const first = [columnShape('id', 'BIGINT', false), columnShape('tags', 'VARCHAR[]', true)];
    const plan = await catalog.planColumns('shop', 'items', first);
    expect(plan.map((c) => [c.name, c.id, (c.children ?? []).map((k) => k.id)])).toEqual([
      ['id', 1, []],
      ['tags', 2, [3]],
    ]);
    expect((await commit(first, plan)).result).toEqual(plan);
    // Unchanged columns plan their ids as they are.
    expect(await catalog.planColumns('shop', 'items', first)).toEqual(plan);

    // A writer plans an added column; before it commits, another commit changes the table first.
    const withTotal = [...first, columnShape('total', 'DECIMAL(12,2)', true)];
    const stale = await catalog.planColumns('shop', 'items', withTotal);
    expect(stale.map((c) => c.id)).toEqual([1, 2, 4]);
    await commit([...first, columnShape('note', 'VARCHAR', true)]);
    const before = await catalog.currentSnapshot();
    await expect(commit(withTotal, stale)).rejects.toThrow(/changed while its files were being written/);
    expect(await catalog.currentSnapshot()).toBe(before);
    // Planned again, it commits, with ids never used before for the new column.
    const fresh = await catalog.planColumns('shop', 'items', withTotal);
    expect(fresh.map((c) => c.id)).toEqual([1, 2, 5]);
    expect((await commit(withTotal, fresh)).result).toEqual(fresh);
  });
});
