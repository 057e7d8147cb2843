import { REAL_CLOCK, type Clock } from '../core/clock.js';
import { newId } from '../core/ids.js';
import type { JobRecord } from '../jobs/job-store.js';
import type { MetadataDb } from '../store/metadata-db.js';
import type { TablePhase, TableState } from './types.js';

export interface SyncRequest {
  tables: string[] | null;
  fullRefresh: boolean;
  /** Started by the source's schedule, not asked for by a caller. */
  scheduled?: boolean;
}

export interface TableProgress {
  table: string;
  lake_table: string;
  phase: TablePhase;
  completed: number;
  total: number | null;
  error?: string;
  /** Rows the lake lost because the source deleted them (delete detection), in this sync. */
  deleted?: number;
  /** A cdc table's changes applied in this sync. */
  changes?: { inserts: number; updates: number; deletes: number };
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

  async insert(id: string, sourceId: string, request: SyncRequest): Promise<void> {
    await this.db.run('INSERT INTO syncs (id, source_id, created, request, progress) VALUES (?, ?, ?, ?, ?)', [
      id,
      sourceId,
      this.nowSeconds(),
      JSON.stringify(request),
      '{}',
    ]);
  }

  async get(
    id: string,
  ): Promise<{ sourceId: string; request: SyncRequest; progress: Record<string, TableProgress> } | undefined> {
    const row = await this.db.get<{ source_id: string; request: string; progress: string }>(
      'SELECT source_id, request, progress FROM syncs WHERE id = ?',
      [id],
    );
    return (
      row && {
        sourceId: row.source_id,
        request: JSON.parse(row.request) as SyncRequest,
        progress: JSON.parse(row.progress) as Record<string, TableProgress>,
      }
    );
  }

  async latestId(sourceId: string): Promise<string | undefined> {
    return (
      await this.db.get<{ id: string }>(
        'SELECT id FROM syncs WHERE source_id = ? ORDER BY created DESC, id DESC LIMIT 1',
        [sourceId],
      )
    )?.id;
  }

  async liveId(sourceId: string): Promise<string | undefined> {
    return (
      await this.db.get<{ id: string }>(
        `SELECT s.id FROM syncs s JOIN jobs j ON j.id = s.id WHERE s.source_id = ? AND j.status IN ('queued', 'running') LIMIT 1`,
        [sourceId],
      )
    )?.id;
  }

  async saveProgress(id: string, progress: Record<string, TableProgress>): Promise<void> {
    await this.db.run('UPDATE syncs SET progress = ? WHERE id = ?', [JSON.stringify(progress), id]);
  }

  async states(sourceId: string): Promise<Map<string, TableState>> {
    const rows = await this.db.all<{
      schema_name: string;
      table_name: string;
      cursor_value: string | null;
      columns: string;
      lake_table: string | null;
      soft_deletes: number | null;
    }>(
      'SELECT schema_name, table_name, cursor_value, columns, lake_table, soft_deletes FROM source_table_state WHERE source_id = ?',
      [sourceId],
    );
    return new Map(
      rows.map((r) => [
        `${r.schema_name}.${r.table_name}`,
        {
          cursorValue: r.cursor_value,
          columns: JSON.parse(r.columns) as TableState['columns'],
          ...(r.lake_table === null ? {} : { lakeTable: r.lake_table }),
          softDeletes: r.soft_deletes === 1,
        },
      ]),
    );
  }

  async saveState(
    sourceId: string,
    schema: string,
    table: string,
    state: TableState,
    lakeSchema: string,
    lakeTable: string,
  ): Promise<void> {
    await this.db.run(
      `INSERT INTO source_table_state (source_id, schema_name, table_name, cursor_value, columns, lake_schema, lake_table, last_synced, soft_deletes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (source_id, schema_name, table_name) DO UPDATE SET cursor_value = excluded.cursor_value, columns = excluded.columns,
           lake_schema = excluded.lake_schema, lake_table = excluded.lake_table, last_synced = excluded.last_synced, soft_deletes = excluded.soft_deletes`,
      [
        sourceId,
        schema,
        table,
        state.cursorValue,
        JSON.stringify(state.columns),
        lakeSchema,
        lakeTable,
        this.nowSeconds(),
        state.softDeletes ? 1 : 0,
      ],
    );
  }

  /** A source error or schema change, kept for the Logs area. */
  async log(
    organizationId: string,
    sourceId: string,
    kind: 'error' | 'schema_change' | 'warning',
    table: string | null,
    message: string,
    details: object,
  ): Promise<void> {
    await this.db.run(
      'INSERT INTO source_logs (id, organization_id, source_id, kind, table_name, message, details, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      [newId('log'), organizationId, sourceId, kind, table, message, JSON.stringify(details), this.nowSeconds()],
    );
  }
}
