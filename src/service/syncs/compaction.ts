import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdentifier, quoteLiteral } from '../engine/duckdb.js';
import { DELETED_AT } from '../sources/lake-names.js';

/**
 * An incremental table merged whole (a compaction): its current rows less those whose key the batch of changed rows
 * holds, then the batch. Detecting deletes (`keysSql`, the source's keys now), a row the source no longer has is
 * left out, or with soft deletes kept and marked when it was not yet; `deletedSql` counts those rows.
 */
export function compactionSql(input: {
  /** The table's rows as they are (Lake.rowsSql). */
  current: string;
  /** The changed rows, as the table's columns. */
  batch: string;
  key: readonly string[];
  keysSql?: string;
  softDeletes: boolean;
  syncedAt: string;
}): { rows: string; deletedSql?: string } {
  const { current, keysSql } = input;
  const match = (other: string): string =>
    input.key.map((k) => `${other}.${quoteIdentifier(k)} IS NOT DISTINCT FROM p.${quoteIdentifier(k)}`).join(' AND ');
  const gone = keysSql ? `NOT EXISTS (SELECT 1 FROM (${keysSql}) k WHERE ${match('k')})` : 'false';
  const softly = input.softDeletes && keysSql !== undefined;
  const previousRows = softly
    ? `SELECT p.* REPLACE (CASE WHEN p.${DELETED_AT} IS NULL AND ${gone} THEN TIMESTAMPTZ ${quoteLiteral(input.syncedAt)} ELSE p.${DELETED_AT} END AS ${DELETED_AT}) FROM (${current}) p`
    : `SELECT p.* FROM (${current}) p${keysSql ? ` WHERE NOT ${gone}` : ''}`;
  return {
    rows: `WITH b AS (${input.batch}) SELECT p.* FROM (${previousRows}) p WHERE NOT EXISTS (SELECT 1 FROM b WHERE ${match('b')}) UNION ALL BY NAME SELECT * FROM b`,
    ...(keysSql
      ? {
          deletedSql: `SELECT count(*) AS n FROM (${current}) p WHERE ${gone}${softly ? ` AND p.${DELETED_AT} IS NULL` : ''}`,
        }
      : {}),
  };
}

/** Counts the rows a compaction deletes (or marks), on the write's connection: 0 when it detects no deletes. */
export async function compactionDeletes(
  connection: DuckDBConnection,
  compaction: ReturnType<typeof compactionSql>,
): Promise<number> {
  if (!compaction.deletedSql) return 0;
  return Number((await connection.runAndReadAll(compaction.deletedSql)).getRowObjectsJS()[0]?.n ?? 0);
}
