import { createHash } from 'node:crypto';
import type pg from 'pg';

/**
 * What a partitioned table's partitions are now, as one short text: each leaf partition's oid and file. Its changes
 * go as the partitioned table's (publish_via_partition_root), but the rows of a partition detached, attached or
 * dropped, or truncated by itself (PostgreSQL does not publish a partition's own TRUNCATE then), come or go with no
 * change in the stream: when this differs from what the table's last copy found, the table is copied whole again.
 * A TRUNCATE, VACUUM FULL or CLUSTER gives a partition a new file; only the first loses rows, and the others cost one
 * copy. Undefined for a table that is not partitioned, and before PostgreSQL 13 (changes then go as each
 * partition's own).
 */
export async function partitionsNow(client: pg.Client, schema: string, name: string): Promise<string | undefined> {
  const { rows } = await client.query<{ partitioned: boolean; version: number; leaves: string | null }>(
    `SELECT c.relkind = 'p' AS partitioned, current_setting('server_version_num')::int AS version,
            (SELECT string_agg(p.oid::text || ':' || p.relfilenode::text, ',' ORDER BY p.oid)
               FROM pg_partition_tree(c.oid) t JOIN pg_class p ON p.oid = t.relid
              WHERE t.isleaf AND c.relkind = 'p') AS leaves
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2`,
    [schema, name],
  );
  const row = rows[0];
  if (!row?.partitioned || row.version < 130_000) return undefined;
  return createHash('sha256')
    .update(row.leaves ?? '')
    .digest('hex')
    .slice(0, 32);
}
