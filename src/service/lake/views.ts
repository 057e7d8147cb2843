import { newId } from '../ids.js';
import { writeTransaction, type MetadataDb } from '../store/database.js';
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

  list(organizationId: string): LakeView[] {
    return (this.db.prepare('SELECT * FROM lake_views WHERE organization_id = ? ORDER BY schema_name, view_name').all(organizationId) as ViewRow[]).map(toView);
  }

  get(organizationId: string, schema: string, name: string): LakeView | undefined {
    const row = this.db
      .prepare('SELECT * FROM lake_views WHERE organization_id = ? AND lower(schema_name) = lower(?) AND lower(view_name) = lower(?)')
      .get(organizationId, schema, name) as ViewRow | undefined;
    return row && toView(row);
  }

  insert(organizationId: string, schema: string, name: string, sql: string, references: ObjectName[], columns: ColumnDescription[]): LakeView {
    const now = Math.floor(Date.now() / 1000);
    const id = newId('view');
    writeTransaction(this.db, () => {
      this.db
        .prepare('INSERT INTO lake_views (id, organization_id, schema_name, view_name, sql, table_refs, columns, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(id, organizationId, schema, name, sql, JSON.stringify(references), JSON.stringify(columns), now, now);
      bumpCatalogVersion(this.db, organizationId);
    });
    return this.get(organizationId, schema, name) as LakeView;
  }

  remove(organizationId: string, schema: string, name: string): boolean {
    return writeTransaction(this.db, () => {
      const removed = this.db
        .prepare('DELETE FROM lake_views WHERE organization_id = ? AND lower(schema_name) = lower(?) AND lower(view_name) = lower(?)')
        .run(organizationId, schema, name).changes > 0;
      if (removed) bumpCatalogVersion(this.db, organizationId);
      return removed;
    });
  }

  /** Views are described against the tables of the moment; a rebuilt catalog refreshes their columns. */
  updateColumns(id: string, columns: ColumnDescription[]): void {
    this.db.prepare('UPDATE lake_views SET columns = ? WHERE id = ?').run(JSON.stringify(columns), id);
  }
}
