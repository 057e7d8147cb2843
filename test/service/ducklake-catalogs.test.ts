import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LakeCatalogs } from '../../src/service/storage/ducklake/lake-catalogs.js';
import { LakeLayout } from '../../src/service/storage/layout.js';
import { openMetadataDb } from '../../src/service/store/database.js';
import { adminQuery, ADMIN_URL, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';

/** Where each organization's DuckLake catalog lives (decision 48), created on first use. */
describe('each organization’s DuckLake catalog', () => {
  const home = mkdtempSync(join(tmpdir(), 'lake-ducklake-catalogs-'));
  const layout = new LakeLayout(home);
  let pg: TestDatabase;
  beforeAll(async () => {
    pg = await createTestDatabase();
  }, 60_000);
  afterAll(async () => {
    await pg?.drop();
    rmSync(home, { recursive: true, force: true });
  });

  it('with SQLite metadata: a file in the organization’s folder, its data path the organization’s tables', async () => {
    const db = await openMetadataDb(join(home, 'metadata.sqlite'));
    const catalogs = new LakeCatalogs(db, layout, 'lake test');
    try {
      const catalog = await catalogs.for('org_a1');
      expect(catalogs.for('org_a1')).toBe(catalogs.for('org_a1'));
      expect(existsSync(layout.ducklakeFile('org_a1'))).toBe(true);
      expect(await catalog.metadata('data_path')).toBe(`${layout.tablesDir('org_a1')}/`);
      // Another organization's catalog is another file.
      await catalogs.for('org_b2');
      expect(existsSync(layout.ducklakeFile('org_b2'))).toBe(true);
    } finally {
      await catalogs.close();
      await db.close();
    }
  });

  it('with PostgreSQL metadata: a schema ducklake_<organization> of the metadata database', async () => {
    const url = new URL(ADMIN_URL);
    url.pathname = `/${pg.database}`;
    const db = await openMetadataDb(url.toString());
    const catalogs = new LakeCatalogs(db, layout, 'lake test');
    try {
      const catalog = await catalogs.for('org_a1');
      expect(await catalog.metadata('version')).toBe('1.0');
      const tables = await adminQuery(
        "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'ducklake_org_a1'",
        pg.database,
      );
      expect(tables.rows[0].n).toBe(28);
      expect(() => LakeCatalogs.metadataSchema('Org; DROP')).toThrow();
    } finally {
      await catalogs.close();
      await db.close();
    }
  });
});
