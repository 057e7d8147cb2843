import type { SourceTable } from '../connectors/types.js';
import type { Lake } from '../storage/lake.js';
import type { SyncSettings } from './settings.js';

/** Where a sync's tables land and what bounds their reading: what every connector's extractor is given. */
export interface ExtractionContext {
  tasks: readonly TableTask[];
  states: ReadonlyMap<string, TableState>;
  lake: Lake;
  organizationId: string;
  stagingDir: string;
  syncedAt: string;
  reporter: SyncReporter;
  /** Idle and time bounds on the source, and the staging caps. */
  limits: SyncSettings;
  signal: AbortSignal;
  /** Records per staged segment (ROWS_PER_SEGMENT unless given; a test stages many segments of a small table). */
  segmentRows?: number;
  /** Where an error of lake's own code goes (the server's log), when a table fails on one (failureReason). */
  reportInternal?: (error: Error) => void;
}

export type TablePhase = 'queued' | 'extracting' | 'loading' | 'committed' | 'failed';

/** One table of a sync: where it comes from, where it goes in the lake, and how. */
export interface TableTask {
  table: SourceTable;
  /** `schema.table` in the source. */
  key: string;
  lakeSchema: string;
  lakeTable: string;
  /** Incremental by its cursor column, merged on the primary key; false means full refresh. */
  incremental: boolean;
  /** The source keeps deleted rows, marked with `_deleted_at` (its `deletes: soft`). */
  softDeletes: boolean;
  /** A cdc table copied whole: the change position its copy is as of, kept with it (the table's `lake.cdc_lsn`). */
  cdcTag?: string;
  /** A partitioned cdc table copied whole: its partitions as the copy found them (the table's `lake.cdc_partitions`). */
  cdcPartitions?: string;
  /** A cdc table a full refresh asked to copy whole again. */
  cdcCopy?: boolean;
}

/** Per table: what was last synced, so the next sync continues from there and notices schema changes. */
export interface TableState {
  cursorValue: string | null;
  columns: { name: string; type: string }[];
  /** The lake table it was last committed to (absent in states saved before it was kept). */
  lakeTable?: string;
  /** Written with soft deletes (a `_deleted_at` column) last time. */
  softDeletes?: boolean;
}

export interface SyncReporter {
  /** A new phase; `error` (for `failed`) is the table's reason, already free of hosts, users and passwords. */
  phase(
    task: TableTask,
    phase: TablePhase,
    details?: {
      completed?: number;
      total?: number | null;
      error?: string;
      deleted?: number;
      /** A cdc table's changes applied this sync. */
      changes?: { inserts: number; updates: number; deletes: number };
    },
  ): void;
  rows(task: TableTask, completed: number): void;
  schemaChange(task: TableTask, change: { added: string[]; dropped: string[]; retyped: string[] }): void;
}

export interface TableResult {
  task: TableTask;
  /** Rows of the committed table. */
  rows: number;
  /** Rows read from the source in this sync (what usage meters): all of them, or the changed ones when merging. */
  transferred: number;
  cursorValue: string | null;
  columns: { name: string; type: string }[];
  error?: string;
}
