import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { lock, type MetadataDb } from '../../store/metadata-db.js';
import { SqliteMetadataDb } from '../../store/sqlite-db.js';
import type { LakeLayout } from '../layout.js';
import { openPrivilegedConnection } from '../../engine/duckdb.js';
import { DuckLakeCatalog } from './catalog.js';
import { convertToDuckLake } from './convert-lake.js';
import { LegacyLake } from './legacy-lake.js';
import { HomeDamaged, isDamagedDatabase } from '../../home/home-damaged.js';

/**
 * Each organization's DuckLake catalog, opened (and created) on first use: on PostgreSQL a schema of the metadata
 * database, `ducklake_<organization id>`; on SQLite a file of its own in the organization's folder (decision 48).
 * Its data path is the organization's tables folder.
 */
export class LakeCatalogs {
  private readonly open = new Map<string, Promise<DuckLakeCatalog>>();
  private readonly files: SqliteMetadataDb[] = [];

  constructor(
    private readonly db: MetadataDb,
    private readonly layout: LakeLayout,
    private readonly createdBy: string,
  ) {}

  /** The PostgreSQL schema of an organization's catalog: its id is already lower-case letters, digits and `_`. */
  static metadataSchema(organizationId: string): string {
    if (!/^[a-z0-9_]+$/.test(organizationId)) throw new Error(`Unexpected organization id ${organizationId}.`);
    return `ducklake_${organizationId}`;
  }

  for(organizationId: string): Promise<DuckLakeCatalog> {
    let catalog = this.open.get(organizationId);
    if (!catalog) {
      catalog = this.create(organizationId);
      // A failed open is tried again next time, not remembered.
      catalog.catch(() => this.open.delete(organizationId));
      this.open.set(organizationId, catalog);
    }
    return catalog;
  }

  private async create(organizationId: string): Promise<DuckLakeCatalog> {
    let catalog: DuckLakeCatalog;
    if (this.db.dialect === 'postgres') {
      catalog = new DuckLakeCatalog(
        this.db,
        `${LakeCatalogs.metadataSchema(organizationId)}.`,
        lock.catalog(organizationId),
      );
    } else {
      const file = this.layout.ducklakeFile(organizationId);
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      const db = saidDamaged(file, () => SqliteMetadataDb.open(file));
      this.files.push(db);
      catalog = new DuckLakeCatalog(db, '', lock.catalog(organizationId));
      await saidDamaged(file, () =>
        catalog.initialize(this.layout.files.urlOf(this.layout.tablesDir(organizationId)), this.createdBy),
      );
    }
    if (this.db.dialect === 'postgres')
      await catalog.initialize(this.layout.files.urlOf(this.layout.tablesDir(organizationId)), this.createdBy);
    await this.convertLegacy(organizationId, catalog);
    return catalog;
  }

  /**
   * An organization whose lake an earlier release wrote (lake_tables, lake_snapshots, lake_views) gets it converted
   * into its new catalog the first time any process opens it: in one transaction that first checks, under the
   * catalog's lock, that no other process converted it meanwhile. A crash leaves the catalog empty, converted again
   * at the next open; the earlier release's rows are only read, never changed.
   */
  private async convertLegacy(organizationId: string, catalog: DuckLakeCatalog): Promise<void> {
    if ((await catalog.currentSnapshot()) > 0) return;
    const legacy = new LegacyLake(this.db);
    if (!(await legacy.holdsAnything(organizationId))) return;
    const { connection, close } = await openPrivilegedConnection({});
    try {
      await convertToDuckLake({ organizationId, legacy, layout: this.layout, catalog, connection });
    } finally {
      close();
    }
  }

  async close(): Promise<void> {
    this.open.clear();
    for (const file of this.files.splice(0)) await file.close();
  }
}

/**
 * An organization's catalog file that SQLite cannot read (damaged, or another file in its place) named as such: the
 * error is logged (the caller sees internal_error and its request id), and the log says which file and why.
 */
function saidDamaged<T>(file: string, open: () => T): T {
  const say = (error: unknown): never => {
    if (!isDamagedDatabase(error)) throw error;
    throw new HomeDamaged(
      file,
      `An organization's DuckLake catalog file ${file} is not a database lake can read (${(error as Error).message}): it is damaged, or another file took its place. Restore it from a backup.`,
    );
  };
  try {
    const result = open();
    return result instanceof Promise ? (result.catch(say) as T) : result;
  } catch (error) {
    return say(error);
  }
}
