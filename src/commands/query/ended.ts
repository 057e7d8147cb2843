import { CliError, EXIT } from '../exit-codes.js';

/** What to do after each way a query can end without rows (docs/api.md, "Query failures"). */
const NEXT_STEP: Record<string, string> = {
  query_failed:
    'Fix the SQL and run it again; `lake catalog ls` lists the tables you may read, `lake catalog describe <table>` their columns.',
  write_not_allowed:
    "lake query runs read-only statements (SELECT, and DuckDB's DESCRIBE, SHOW, SUMMARIZE, EXPLAIN); syncs write the lake's tables.",
  query_timeout:
    "Narrow the query (filter, aggregate, fewer columns), or give it longer with --timeout, up to the server's limit.",
  query_memory_limit:
    'Make it hold less at once (filter or aggregate before joining or sorting, fewer columns), or ask the operator to raise LAKE_QUERY_MEMORY_LIMIT.',
  result_too_large:
    'Keep less of the result (an aggregate, --row-limit or --byte-limit), or ask the operator to raise LAKE_QUERY_MAX_RESULT_MB.',
  result_storage_full:
    "Results you no longer need free space as they expire; keep less of this one (--row-limit), or ask an owner to raise the organization's result storage.",
  server_disk_full:
    "lake's disk is full (its query results or spill folder): free space there (on a server, ask its operator; lake admin gc removes what lake no longer needs), then run it again.",
  worker_crashed: 'Run it again; if it crashes again, quote the query id to the operator.',
  query_abandoned: 'The process holding it stopped before it ended; run it again.',
  worker_lost: 'The server holding it stopped; run it again.',
  cancelled: 'It was cancelled; run it again to get its rows.',
};

/**
 * The error for a query that ended without rows (failed or cancelled): its code and message as the API gives them,
 * what to do next, and its id, which `lake query ls` and `lake jobs get` find it by.
 */
export function queryEndedError(
  query: { id: string; status: string; error?: { code?: string; message?: string } | null },
  requestId?: string,
): CliError {
  const code = query.error?.code ?? (query.status === 'failed' ? 'query_failed' : `query_${query.status}`);
  const next = NEXT_STEP[code] ?? NEXT_STEP[query.status] ?? '';
  return new CliError(
    code,
    query.error?.message ?? `Query ${query.id} ${query.status}; it has no rows.`,
    EXIT.failed,
    `${next}${next ? ' ' : ''}Query id: ${query.id}`,
    { query: query.id },
    requestId,
  );
}
