import { dirname } from 'node:path';
import { planWithoutPaths } from './plan-text.js';
import { mark } from '../../support/debug-timing.js';
import { renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection, DuckDBPreparedStatement, DuckDBResult, DuckDBResultReader } from '@duckdb/node-api';
import { bindParameters, type QueryParameter } from './parameters.js';
import { LakeServiceError, isProgrammingError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import { loadDuckDB, quoteIdentifier, quoteLiteral, withoutSettingAdvice } from './duckdb.js';
import type { InstancePool } from './instance-pool.js';
import { dynamicPivot, PIVOT_VALUE_BYTES, PIVOT_VALUE_LIMIT } from './pivot.js';
import { asCopySource, withLakeMeaning } from './statement-forms.js';
import { readFirstPage, type ResultColumn } from './result-rows.js';
import { intervalToIsoSql } from './json-values.js';
import type { QueryEvents, QueryFailureCode, QueryJob, QueryOutcome, StopReason } from './query-engine.js';
import type { SandboxCache } from './sandbox-cache.js';
import type { Sandbox, SandboxSpec } from './sandbox.js';
import { groupDigits } from '../../support/group-digits.js';
import { isDiskFull } from '../../support/disk-full.js';

/**
 * Types Parquet cannot hold exactly (HUGEINT would become DOUBLE, a BIGNUM its digits anyway), and DuckDB's newer
 * types whose values the node API gives as its own text rather than DuckDB's (a GEOMETRY as escaped WKB bytes, a
 * VARIANT as a SQL literal; one holding a HUGEINT cannot even be written to Parquet): their columns are written as
 * DuckDB's exact text, a GEOMETRY as WKT. A VARIANT column is written as its JSON value. An INTERVAL column too, as
 * ISO 8601 (the text its JSON value always was): Parquet's INTERVAL holds neither negative values nor microseconds.
 */
const NEEDS_TEXT = /\b(U?HUGEINT|UNION|BIGNUM|GEOMETRY|VARIANT)\b/;
/** How often a running query's result size is looked at. */
const WATCH_EVERY_MS = 100;

export const RESULT_FILE_NAME = 'result.parquet';

export interface PreparedSelect {
  prepared: DuckDBPreparedStatement;
  columns: ResultColumn[];
}

/**
 * Prepares (binds) one statement and checks what only binding knows: it is a SELECT, it takes no parameters, and
 * every column has a type lake can name. Preparing `select $1` leaves a column of no type, whose type the node API
 * cannot even read (it threw "Unexpected type id: 0" and, unhandled, ended the process).
 */
export async function prepareSelect(
  connection: DuckDBConnection,
  statement: string,
  parameters?: readonly QueryParameter[],
): Promise<PreparedSelect> {
  const duckdb = await loadDuckDB();
  const prepared = await connection.prepare(statement);
  if (prepared.statementType !== duckdb.StatementType.SELECT) {
    const kind = duckdb.StatementType[prepared.statementType] ?? 'other';
    throw new LakeServiceError(
      'write_not_allowed',
      `Only read-only SELECT statements run; this statement is of type ${kind}.`,
      { param: 'sql' },
    );
  }
  if (prepared.parameterCount > 0) {
    if (!parameters)
      throw new Error(
        'The statement has parameters ($1, ?, $name) and no values are given for them. Send them as the query’s parameters, or write them into the SQL.',
      );
    await bindParameters(connection, prepared, parameters);
    // A parameter's column has a type only once values are bound and it runs: an empty run of it says the types.
    const probe = await connection.prepare(`SELECT * FROM (${statement}\n) LIMIT 0`);
    try {
      await bindParameters(connection, probe, parameters);
      const empty = await probe.runAndReadAll();
      const types = empty.columnTypes();
      return { prepared, columns: empty.columnNames().map((name, i) => ({ name, type: String(types[i]) })) };
    } finally {
      probe.destroySync();
    }
  }
  const columns: ResultColumn[] = [];
  for (let i = 0; i < prepared.columnCount; i++) {
    let type: string;
    try {
      type = prepared.columnType(i).toString();
    } catch {
      throw new Error(
        `Column ${i + 1} (${prepared.columnName(i)}) has no type DuckDB can name; cast it to a type, for example CAST(… AS VARCHAR).`,
      );
    }
    columns.push({ name: prepared.columnName(i), type });
  }
  return { prepared, columns };
}

type RunStop = StopReason | 'query_timeout' | 'result_limit';

/**
 * One query on one sandbox: prepare, execute into Parquet, read the first page back. It enforces the limits one
 * process can enforce on itself (time, including preparation, and result size, by interrupting DuckDB); a worker
 * pool adds the ones only another process can (memory, and killing a query DuckDB cannot interrupt).
 */
export class QueryRun {
  private stopReason: RunStop | undefined;
  private sandbox: Sandbox | undefined;

  constructor(
    private readonly job: QueryJob,
    private readonly pool: InstancePool,
    /** Where its sandbox comes from and, after a query that ended by itself, goes back to. */
    private readonly sandboxes: SandboxCache,
    /** A sandbox inspect already opened for this job, if any. */
    sandbox?: Sandbox,
  ) {
    this.sandbox = sandbox;
  }

  private get sandboxSpec(): SandboxSpec {
    return {
      catalogFile: this.job.catalogFile,
      readableDirs: this.job.readableDirs,
      writableDir: this.job.writableDir,
      pool: this.pool,
    };
  }

  stop(reason: RunStop): void {
    this.stopReason ??= reason;
    this.sandbox?.interrupt();
  }

  async execute(events: QueryEvents = {}): Promise<QueryOutcome> {
    const file = join(this.job.resultDir, RESULT_FILE_NAME);
    const deadline = setTimeout(() => this.stop('query_timeout'), this.job.limits.timeoutMs);
    let executingSince: number | undefined;
    // DuckDB's LINE n: excerpt and caret point into the caller's own SQL while it is prepared; after that, into
    // the COPY lake wraps it in.
    let excerptIsTheCallers = true;
    const watcher = setInterval(() => {
      if (resultSize(file) > this.job.limits.maxResultBytes) this.stop('result_limit');
      // An interrupt that reached DuckDB between two statements is lost; repeat it until the run ends.
      if (this.stopReason) this.sandbox?.interrupt();
    }, WATCH_EVERY_MS);
    try {
      this.sandbox ??= await this.sandboxes.open(this.sandboxSpec);
      if (this.stopReason) this.sandbox.interrupt();
      mark('sandbox open');
      const { connection } = this.sandbox;
      // Unqualified names resolve in the query's schema; the sandbox goes back to `lake` before it is kept.
      if (this.job.schema !== undefined) await connection.run(`USE lake.${quoteIdentifier(this.job.schema)}`);
      // The values a PIVOT looks up first are lake's query, not the caller's: no excerpt points into them.
      excerptIsTheCallers = false;
      const written = await this.statementToRun(connection);
      // A statement lake rewrote (SHOW TABLES, a PIVOT with its values) is not the text the caller sent either.
      excerptIsTheCallers = written === this.job.statement;
      const { columns } = await prepareSelect(connection, written, this.job.parameters);
      excerptIsTheCallers = false;
      if (this.job.explain) return await this.explain(connection, written, file, (at) => (executingSince = at), events);
      const textColumns = columns.filter((c) => NEEDS_TEXT.test(c.type) || c.type === 'INTERVAL');
      const statement = asCopySource(written);
      const asText = (c: { name: string; type: string }): string =>
        c.type === 'INTERVAL'
          ? intervalToIsoSql(quoteIdentifier(c.name))
          : `CAST(${quoteIdentifier(c.name)} AS ${c.type === 'VARIANT' ? 'JSON' : 'VARCHAR'})`;
      const whole =
        textColumns.length === 0
          ? `${statement}\n`
          : `SELECT * REPLACE (${textColumns.map((c) => `${asText(c)} AS ${quoteIdentifier(c.name)}`).join(', ')}) FROM (${statement}\n)`;
      const { rowLimit, byteLimit, dryRun } = this.job;
      // A dry run writes the columns and no rows (DuckDB plans LIMIT 0 as an empty result: nothing is read). A row
      // limit reads one row more, to know whether it cut any.
      const source = dryRun
        ? `SELECT * FROM (${whole}) LIMIT 0\n`
        : rowLimit !== undefined
          ? `SELECT * FROM (${whole}) LIMIT ${rowLimit + 1}\n`
          : whole;
      mark('prepared');
      if (this.stopReason) throw new Error('stopped');
      executingSince = performance.now();
      events.executing?.();
      const copied = await runBound(
        connection,
        `COPY (${source}) TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd)`,
        this.job.parameters,
      );
      mark('result written (COPY)');
      if (resultSize(file) > this.job.limits.maxResultBytes) this.stopReason ??= 'result_limit';
      if (this.stopReason) throw new Error('stopped');
      let rowCount = Number(copied.rowsChanged);
      let truncated = false;
      if (rowLimit !== undefined && rowCount > rowLimit) {
        rowCount = await keepFirstRows(connection, file, rowLimit);
        truncated = true;
      }
      if (byteLimit !== undefined && resultSize(file) > byteLimit) {
        rowCount = await keepFirstBytes(connection, file, rowCount, byteLimit);
        truncated = true;
      }
      const durationMs = performance.now() - executingSince;
      const resultBytes = resultSize(file);
      const first = await readFirstPage(
        connection,
        file,
        rowCount,
        columns.map((c) => (textColumns.includes(c) ? 'VARCHAR' : c.type)),
      );
      if (this.stopReason) throw new Error('stopped');
      mark('first page read back');
      return {
        status: 'succeeded',
        rowCount,
        resultBytes,
        columns: first.columns,
        firstRows: first.rows,
        durationMs,
        ...(truncated ? { truncated } : {}),
      };
    } catch (error) {
      const durationMs = executingSince === undefined ? 0 : performance.now() - executingSince;
      return this.failure(error, durationMs, excerptIsTheCallers);
    } finally {
      clearTimeout(deadline);
      clearInterval(watcher);
      // An interrupted instance is not trusted with another query; one that ended by itself is, back in `lake`.
      const reset =
        this.sandbox && this.stopReason === undefined && this.job.schema !== undefined
          ? await this.sandbox.connection.run('USE lake').then(
              () => true,
              () => false,
            )
          : true;
      if (this.sandbox && this.stopReason === undefined && reset) this.sandboxes.keep(this.sandboxSpec, this.sandbox);
      else this.sandbox?.close();
    }
  }

  /**
   * The statement to run: as written, SHOW TABLES as lake means it, or a PIVOT with the values of its ON columns
   * found first, in this same sandbox, with the query's own limits (pivot.ts).
   */
  private async statementToRun(connection: DuckDBConnection): Promise<string> {
    const pivot = dynamicPivot(this.job.statement);
    if (!pivot) return withLakeMeaning(this.job.statement);
    const values: string[][] = [];
    // Read chunk by chunk against a budget: a column of huge distinct texts must end in an error, not in the
    // process holding them all (the values become column names and the text of the statement).
    let bytes = 0;
    for (const query of pivot.valueQueries) {
      const { prepared } = await prepareSelect(connection, query);
      const result = await prepared.stream();
      const found: string[] = [];
      for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
        for (const value of chunk.getColumnValues(0)) {
          const text = String(value);
          bytes += text.length;
          found.push(text);
        }
        if (found.length > PIVOT_VALUE_LIMIT)
          throw new Error(
            `The PIVOT would make more than ${groupDigits(PIVOT_VALUE_LIMIT)} columns; list the values you want with ON column IN (…).`,
          );
        if (bytes > PIVOT_VALUE_BYTES)
          throw new Error(
            `The PIVOT's column values hold more than ${PIVOT_VALUE_BYTES / 2 ** 20} MB of text; list the values you want with ON column IN (…).`,
          );
      }
      values.push(found);
    }
    return pivot.withValues(values);
  }

  /**
   * EXPLAIN (ANALYZE) of the prepared SELECT, in the same sandbox; its rows (explain_key, explain_value: the plan as
   * text) become the result file, so it pages, downloads and prints like any result.
   */
  private async explain(
    connection: DuckDBConnection,
    statement: string,
    file: string,
    started: (at: number) => void,
    events: QueryEvents,
  ): Promise<QueryOutcome> {
    const executingSince = performance.now();
    started(executingSince);
    events.executing?.();
    const explained = `EXPLAIN ${this.job.explain === 'analyze' ? 'ANALYZE ' : ''}${statement}\n`;
    const parameters = this.job.parameters;
    let plan: DuckDBResultReader;
    if (parameters && parameters.length > 0) {
      const prepared = await connection.prepare(explained);
      await bindParameters(connection, prepared, parameters);
      plan = await prepared.runAndReadAll();
    } else plan = await connection.runAndReadAll(explained);
    const durationMs = performance.now() - executingSince;
    if (this.stopReason) throw new Error('stopped');
    // A plan names the files it reads: where the lake lives on this server is no business of the caller's.
    const hidden = [...this.job.readableDirs, this.job.writableDir, dirname(this.job.catalogFile)]
      .filter((dir) => dir.length > 1)
      .sort((a, b) => b.length - a.length);
    const rows = plan
      .getRows()
      .map((row) => `(${row.map((value) => quoteLiteral(planWithoutPaths(String(value ?? ''), hidden))).join(', ')})`);
    const copied = await connection.run(
      `COPY (SELECT * FROM (VALUES ${rows.join(', ')}) AS plan(explain_key, explain_value)) TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd)`,
    );
    const rowCount = Number(copied.rowsChanged);
    const first = await readFirstPage(connection, file, rowCount, ['VARCHAR', 'VARCHAR']);
    return {
      status: 'succeeded',
      rowCount,
      resultBytes: resultSize(file),
      columns: first.columns,
      firstRows: first.rows,
      durationMs,
    };
  }

  private failure(error: unknown, durationMs: number, keepExcerpt: boolean): QueryOutcome {
    const reason = this.stopReason;
    if (reason === 'cancelled')
      return { status: 'cancelled', code: 'cancelled', message: 'The query was cancelled on request.', durationMs };
    const limits = this.job.limits;
    const [code, message]: [QueryFailureCode, string] =
      reason === 'query_timeout'
        ? ['query_timeout', `The query ran longer than the ${limits.timeoutMs / 1000} s limit and was stopped.`]
        : reason === 'result_limit'
          ? resultLimitFailure(limits.resultLimitCode, limits.maxResultBytes)
          : reason === 'abandoned'
            ? [
                'query_abandoned',
                'The lake process running this query stopped before it finished (in local mode, when the command exits). Run it again, or use lake serve for long queries.',
              ]
            : error instanceof LakeServiceError && error.code === 'write_not_allowed'
              ? ['write_not_allowed', error.message]
              : isDiskFull(error)
                ? ['server_disk_full', SERVER_DISK_FULL]
                : ['query_failed', engineMessage(error, keepExcerpt)];
    if (reason === undefined && isProgrammingError(error))
      return { status: 'failed', code, message: INTERNAL_QUERY_FAILURE, durationMs, internalError: stackOf(error) };
    return { status: 'failed', code, message, durationMs };
  }
}

export function resultLimitFailure(
  code: 'result_too_large' | 'result_storage_full',
  bytes: number,
): [QueryFailureCode, string] {
  const size = `${groupDigits(Math.round(bytes / 2 ** 20))} MB`;
  return code === 'result_too_large'
    ? [
        'result_too_large',
        `The result grew past the ${size} limit for one result and was stopped. Select fewer rows or columns, or aggregate.`,
      ]
    : [
        'result_storage_full',
        `The result would take your organization past its result storage (${size} were left). Older results are removed as their retention ends; wait, or select less.`,
      ];
}

/** What a query that failed on an error of lake's own code says: not the error, which the server's log has. */
export const INTERNAL_QUERY_FAILURE =
  "lake failed on an error of its own running this query (not the SQL's doing; the server's log has it, or lake.log in a local lake's home). Run it again; if it fails the same way, report it to whoever runs lake.";

const stackOf = (error: Error): string => redactSecrets(error.stack ?? `${error.name}: ${error.message}`);

/** DuckDB's message; its LINE n: excerpt only when that shows the caller's SQL, not the COPY lake wrapped it in. */
/** What a query says when lake's disk had no room for its result or its spill. */
export const SERVER_DISK_FULL =
  "The disk that holds lake's query results and spill files filled while the query ran; the SQL is not at fault. Run it again once space is freed there.";

function engineMessage(error: unknown, keepExcerpt: boolean): string {
  const message = withoutSettingAdvice(error instanceof Error ? error.message : String(error));
  return keepExcerpt ? message.trimEnd() : message.replace(/\n+LINE \d+:[\s\S]*$/, '').trim();
}

/** Cuts a result file to its first `rows` rows (rewritten beside it, then put in its place); returns them. */
async function keepFirstRows(connection: DuckDBConnection, file: string, rows: number): Promise<number> {
  const cut = `${file}.cut`;
  const written = await connection.run(
    `COPY (SELECT * FROM read_parquet(${quoteLiteral(file)}) LIMIT ${rows}) TO ${quoteLiteral(cut)} (FORMAT parquet, COMPRESSION zstd)`,
  );
  renameSync(cut, file);
  return Number(written.rowsChanged);
}

/**
 * Cuts a result file to the first rows whose file fits in `bytes`: each try keeps the share of rows the size
 * allows, a tenth less, so a few tries settle it (rows are not all the same size). No rows at all, if even one
 * does not fit; the file then holds only the columns.
 */
async function keepFirstBytes(
  connection: DuckDBConnection,
  file: string,
  rowCount: number,
  bytes: number,
): Promise<number> {
  let rows = rowCount;
  for (let size = resultSize(file); size > bytes && rows > 0; size = resultSize(file))
    rows = await keepFirstRows(connection, file, Math.min(rows - 1, Math.floor((rows * bytes * 0.9) / size)));
  return rows;
}

/** Runs SQL, with the query's parameter values bound when it has any. */
async function runBound(
  connection: DuckDBConnection,
  sql: string,
  parameters: readonly QueryParameter[] | undefined,
): Promise<DuckDBResult> {
  if (!parameters || parameters.length === 0) return connection.run(sql);
  const prepared = await connection.prepare(sql);
  try {
    await bindParameters(connection, prepared, parameters);
    return await prepared.run();
  } finally {
    prepared.destroySync();
  }
}

/** Bytes a result file holds so far; 0 before it exists. */
export function resultSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    // Not written yet (or already removed): nothing counts against the cap.
    return 0;
  }
}
