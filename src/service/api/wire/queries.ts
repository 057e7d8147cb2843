import type { QueryObject } from '../../../contract/types.js';
import type { QueryRecord } from '../../queries/store.js';

/** Longer SQL is cut in responses (with an ellipsis); the full text stays in the record. */
export const SQL_ECHO_LIMIT = 1000;

/**
 * The query object every response starts from. lake has no test mode, so livemode is always true. Result fields
 * (files, or columns/data/pages) are added by the API, which knows the format asked for.
 */
export function queryObject(query: QueryRecord): QueryObject {
  const body: QueryObject = {
    object: 'query',
    id: query.id,
    status: query.status,
    created: query.created,
    sql: query.sql.length > SQL_ECHO_LIMIT ? `${query.sql.slice(0, SQL_ECHO_LIMIT)}…` : query.sql,
    livemode: true,
    ...(query.schema !== null ? { schema: query.schema } : {}),
    ...(query.parameters !== null ? { parameters: query.parameters } : {}),
    ...(query.asked.timeoutSeconds !== undefined ? { timeout_seconds: query.asked.timeoutSeconds } : {}),
    ...(query.asked.rowLimit !== undefined ? { row_limit: query.asked.rowLimit } : {}),
    ...(query.asked.byteLimit !== undefined ? { byte_limit: query.asked.byteLimit } : {}),
    ...(query.tags.length > 0 ? { tags: query.tags } : {}),
    ...(query.asked.dryRun ? { dry_run: true as const } : {}),
  };
  if (query.status === 'succeeded') {
    body.truncated = query.truncated === true;
    if (query.columns) body.result_columns = query.columns.map((c) => ({ name: c.name, type: c.type }));
  }
  if (query.status === 'succeeded' || query.status === 'failed' || query.status === 'cancelled') {
    body.duration_ms = query.durationMs;
  }
  if (query.status === 'failed' || query.status === 'cancelled') {
    // The spec's error is {message}; the code (which limit ended it, for example) is lake's addition.
    body.error = { code: query.errorCode ?? 'query_failed', message: query.errorMessage ?? 'The query failed.' };
  }
  return body;
}
