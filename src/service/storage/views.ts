import { newId } from '../core/ids.js';
import { lock, type MetadataDb } from '../store/metadata-db.js';
import { bumpCatalogVersion, type ColumnDescription } from './tables.js';

export interface ObjectName {
  schema: string;
  name: string;
}

/** A logical view: named SQL over lake tables and views, kept in the metadata store and published in the catalog. */
export interface LakeView {
  id: string;
  organizationId: string;
  schema: string;
  name: string;
  sql: string;
  /** The lake tables and views its SQL names directly. */
  references: ObjectName[];
  columns: ColumnDescription[];
  created: number;
  updated: number;
}

interface ViewRow {
  id: string;
  organization_id: string;
  schema_name: string;
  view_name: string;
  sql: string;
  table_refs: string;
  columns: string;
  created: number;
  updated: number;
}

const toView = (row: ViewRow): LakeView => ({
  id: row.id,
  organizationId: row.organization_id,
  schema: row.schema_name,
  name: row.view_name,
  sql: row.sql,
  references: JSON.parse(row.table_refs) as ObjectName[],
  columns: JSON.parse(row.columns) as ColumnDescription[],
  created: row.created,
  updated: row.updated,
});

export class ViewStore {
  constructor(private readonly db: MetadataDb) {}

  async list(organizationId: string): Promise<LakeView[]> {
    return (
      await this.db.all<ViewRow>('SELECT * FROM lake_views WHERE organization_id = ? ORDER BY schema_name, view_name', [
        organizationId,
      ])
    ).map(toView);
  }

  async get(organizationId: string, schema: string, name: string): Promise<LakeView | undefined> {
    const row = await this.db.get<ViewRow>(
      'SELECT * FROM lake_views WHERE organization_id = ? AND lower(schema_name) = lower(?) AND lower(view_name) = lower(?)',
      [organizationId, schema, name],
    );
    return row && toView(row);
  }

  async insert(
    organizationId: string,
    schema: string,
    name: string,
    sql: string,
    references: ObjectName[],
    columns: ColumnDescription[],
  ): Promise<LakeView> {
    const now = Math.floor(Date.now() / 1000);
    const id = newId('view');
    await this.db.transaction(lock.catalog(organizationId), async () => {
      await this.db.run(
        'INSERT INTO lake_views (id, organization_id, schema_name, view_name, sql, table_refs, columns, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [id, organizationId, schema, name, sql, JSON.stringify(references), JSON.stringify(columns), now, now],
      );
      await bumpCatalogVersion(this.db, organizationId);
    });
    return (await this.get(organizationId, schema, name)) as LakeView;
  }

  async remove(organizationId: string, schema: string, name: string): Promise<boolean> {
    return this.db.transaction(lock.catalog(organizationId), async () => {
      const removed =
        (
          await this.db.run(
            'DELETE FROM lake_views WHERE organization_id = ? AND lower(schema_name) = lower(?) AND lower(view_name) = lower(?)',
            [organizationId, schema, name],
          )
        ).changes > 0;
      if (removed) await bumpCatalogVersion(this.db, organizationId);
      return removed;
    });
  }

  /** Views are described against the tables of the moment; a rebuilt catalog refreshes their columns. */
  async updateColumns(id: string, columns: ColumnDescription[]): Promise<void> {
    await this.db.run('UPDATE lake_views SET columns = ? WHERE id = ?', [JSON.stringify(columns), id]);
  }
}
