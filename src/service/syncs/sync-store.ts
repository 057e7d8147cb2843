import { REAL_CLOCK, type Clock } from '../clock.js';
import { newId } from '../ids.js';
import type { JobRecord } from '../jobs/job-store.js';
import type { MetadataDb } from '../store/database.js';
import type { TablePhase, TableState } from './types.js';

export interface SyncRequest {
  tables: string[] | null;
  fullRefresh: boolean;
}

export interface TableProgress {
  table: string;
  lake_table: string;
  phase: TablePhase;
  completed: number;
  total: number | null;
  error?: string;
}

export interface SyncRecord {
  id: string;
  sourceId: string;
  request: SyncRequest;
  progress: Record<string, TableProgress>;
  job: JobRecord;
}

/** Syncs (each also a job), the per-table state syncs carry forward, and the per-source log of errors and schema changes. */
export class SyncStore {
  constructor(
    private readonly db: MetadataDb,
    private readonly clock: Clock = REAL_CLOCK,
  ) {}

  private nowSeconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  insert(id: string, sourceId: string, request: SyncRequest): void {
    this.db.prepare('INSERT INTO syncs (id, source_id, created, request, progress) VALUES (?, ?, ?, ?, ?)').run(id, sourceId, this.nowSeconds(), JSON.stringify(request), '{}');
  }

  get(id: string): { sourceId: string; request: SyncRequest; progress: Record<string, TableProgress> } | undefined {
    const row = this.db.prepare('SELECT source_id, request, progress FROM syncs WHERE id = ?').get(id) as { source_id: string; request: string; progress: string } | undefined;
    return row && { sourceId: row.source_id, request: JSON.parse(row.request) as SyncRequest, progress: JSON.parse(row.progress) as Record<string, TableProgress> };
  }

  latestId(sourceId: string): string | undefined {
    return (this.db.prepare('SELECT id FROM syncs WHERE source_id = ? ORDER BY created DESC, id DESC LIMIT 1').get(sourceId) as { id: string } | undefined)?.id;
  }

  liveId(sourceId: string): string | undefined {
    return (
      this.db.prepare(`SELECT s.id FROM syncs s JOIN jobs j ON j.id = s.id WHERE s.source_id = ? AND j.status IN ('queued', 'running') LIMIT 1`).get(sourceId) as { id: string } | undefined
    )?.id;
  }

  saveProgress(id: string, progress: Record<string, TableProgress>): void {
    this.db.prepare('UPDATE syncs SET progress = ? WHERE id = ?').run(JSON.stringify(progress), id);
  }

  states(sourceId: string): Map<string, TableState> {
    const rows = this.db.prepare('SELECT schema_name, table_name, cursor_value, columns FROM source_table_state WHERE source_id = ?').all(sourceId) as {
      schema_name: string;
      table_name: string;
      cursor_value: string | null;
      columns: string;
    }[];
    return new Map(rows.map((r) => [`${r.schema_name}.${r.table_name}`, { cursorValue: r.cursor_value, columns: JSON.parse(r.columns) as TableState['columns'] }]));
  }

  saveState(sourceId: string, schema: string, table: string, state: TableState, lakeSchema: string, lakeTable: string): void {
    this.db
      .prepare(
        `INSERT INTO source_table_state (source_id, schema_name, table_name, cursor_value, columns, lake_schema, lake_table, last_synced) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (source_id, schema_name, table_name) DO UPDATE SET cursor_value = excluded.cursor_value, columns = excluded.columns,
           lake_schema = excluded.lake_schema, lake_table = excluded.lake_table, last_synced = excluded.last_synced`,
      )
      .run(sourceId, schema, table, state.cursorValue, JSON.stringify(state.columns), lakeSchema, lakeTable, this.nowSeconds());
  }

  /** A source error or schema change, kept for the Logs area. */
  log(organizationId: string, sourceId: string, kind: 'error' | 'schema_change', table: string | null, message: string, details: object): void {
    this.db
      .prepare('INSERT INTO source_logs (id, organization_id, source_id, kind, table_name, message, details, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(newId('log'), organizationId, sourceId, kind, table, message, JSON.stringify(details), this.nowSeconds());
  }
}
