import type { QueryParameter } from './parameters.js';
import type { JsonRow, ResultColumn } from './result-rows.js';
import type { TableReference } from './table-refs.js';

/** Everything an engine needs to run one query; plain data, so it can cross a process boundary as JSON. */
export interface QueryJob {
  queryId: string;
  /** The statement after lake's own SQL guard, without a trailing semicolon. */
  statement: string;
  /** Run `EXPLAIN` (or `EXPLAIN ANALYZE`) of the statement instead: its result is the plan. */
  explain?: 'plan' | 'analyze';
  /** The DuckDB catalog file to attach READ_ONLY as `lake` (cut down for a restricted principal). */
  catalogFile: string;
  /** Directories the query may read: the organization's (or only the permitted) table snapshots. */
  readableDirs: string[];
  /** With an object store: the files it reads, held in the local cache while it runs. */
  files?: string[];
  /** The query's own folder; the result goes to `result.parquet` inside it. */
  resultDir: string;
  /**
   * The directory the sandbox may write in: the organization's results folder, which holds resultDir. The same for
   * every query of the organization, so one locked-down engine instance can serve several in turn.
   */
  writableDir: string;
  limits: QueryLimits;
  /** The lake schema unqualified table names resolve in (`USE lake.<schema>`). */
  schema?: string;
  /** Values bound to the statement's parameters when it runs (never written into its text). */
  parameters?: QueryParameter[];
  /** Keep at most this many rows, and the first rows whose file fits in this many bytes (`truncated` if cut). */
  rowLimit?: number;
  byteLimit?: number;
  /** Prepare and bind, write the result's columns with no rows: nothing is read. */
  dryRun?: boolean;
  /**
   * The statement was rewritten to read tables AT versions (as lake's relations for them): DuckDB's messages are
   * said as about the statement sent (messageAsWritten).
   */
  readsVersions?: boolean;
}

export interface QueryLimits {
  timeoutMs: number;
  /** DuckDB's own memory_limit; a worker's hard limit is this plus its base (see WORKER_BASE_BYTES). */
  memoryLimit: string;
  threads: number;
  /** The result file may not grow past this. */
  maxResultBytes: number;
  /** The code a result over maxResultBytes fails with: the per-result cap, or what is left of the organization's storage. */
  resultLimitCode: 'result_too_large' | 'result_storage_full';
}

/** Why an engine stopped a query before it ended by itself. */
export type StopReason = 'cancelled' | 'abandoned';

export type QueryOutcome =
  | {
      status: 'succeeded';
      rowCount: number;
      resultBytes: number;
      /** As the result file holds them (what every page shows). */
      columns: ResultColumn[];
      /** The first rows, read back by the engine that wrote them, so the first page needs no engine of its own. */
      firstRows: JsonRow[];
      durationMs: number;
      /** A row or byte limit cut rows from the result. */
      truncated?: boolean;
    }
  /** durationMs counts execution only: 0 for a query that ended before it executed (a bind error, a limit in prepare). */
  | {
      status: 'failed' | 'cancelled';
      code: QueryFailureCode;
      message: string;
      durationMs: number;
      /** An error of lake's own code, with its stack: for the server's log, never the caller (isProgrammingError). */
      internalError?: string;
    };

/** Codes a query's job ends with; docs/api.md ("Query failures") explains each. */
export type QueryFailureCode =
  | 'query_failed'
  | 'query_timeout'
  | 'query_memory_limit'
  | 'result_too_large'
  | 'result_storage_full'
  | 'server_disk_full'
  | 'worker_crashed'
  | 'write_not_allowed'
  | 'query_abandoned'
  | 'cancelled';

export interface QueryEvents {
  /** The statement is prepared and execution starts: duration_ms counts from here. */
  executing?(): void;
}

export interface RunningQuery {
  outcome: Promise<QueryOutcome>;
  /** Interrupts the query; an engine that can kill it does so if it has not stopped after its grace. */
  stop(reason: StopReason): void;
}

/**
 * The seam between lake and whatever runs SQL. lake checks, records and schedules; an engine inspects a statement
 * (parse only, nothing bound or read) and runs jobs, at most `slots` at once, writing each result as Parquet.
 * In process for the local CLI; a pool of worker processes for `lake serve`; another engine could stand in here.
 */
export interface QueryEngine {
  readonly slots: number;
  /**
   * DuckDB's parse of the statement: exactly one statement, naming no file by path. Returns the tables it names
   * (CTE names left out); refusals throw LakeServiceError with the spec's codes.
   */
  inspect(job: QueryJob): Promise<TableReference[]>;
  /**
   * The same checks and tables for a statement that will not run here (is a saved query readable by this caller?):
   * DuckDB's parse alone, with no catalog and no sandbox made for it.
   */
  parse(statement: string): Promise<TableReference[]>;
  /** Runs a job that inspect accepted. Never rejects: every ending, a crash included, is an outcome. */
  start(job: QueryJob, events?: QueryEvents): RunningQuery;
  /** Lets go of anything inspect prepared for a job that will not start. */
  forget(queryId: string): void;
  /** Makes whatever the next query needs ahead of time. */
  warm(): void;

  close(): Promise<void>;
}
