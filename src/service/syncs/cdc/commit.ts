import { mark } from '../../../support/debug-timing.js';
import { quoteLiteral } from '../../engine/duckdb.js';
import type { MergeCounts } from '../../storage/ducklake/merge.js';
import { isTaggedType } from '../../storage/ducklake/types.js';
import type { Lake } from '../../storage/lake.js';
import { DELETED_AT, SYNCED_AT } from '../../sources/lake-names.js';
import type { TableTask } from '../types.js';
import { changeRowsSql, netChangesSql, type ConvertedChanges } from './apply.js';
import { rowsInTableColumns } from './columns.js';

/** The table tag that holds the change position a cdc table is applied to (DuckLake tag, set in its commit). */
export const CDC_TAG = 'lake.cdc_lsn';

/**
 * The table tag that holds a partitioned PostgreSQL cdc table's partitions as its last copy found them (partitions.ts):
 * rows that come or go with a partition have no change in the stream.
 */
export const PARTITIONS_TAG = 'lake.cdc_partitions';

type LakeTable = NonNullable<Awaited<ReturnType<Lake['tables']['get']>>>;

/**
 * Commits one table's changes, whichever source they came from, as one snapshot tagged with the position they
 * reach: each key ends as its last change left it (netChangesSql), merged into the table, or the table written whole
 * after a TRUNCATE. Returns what the merge replaced and deleted.
 */
export async function commitChanges(
  input: { lake: Lake; organizationId: string; syncedAt: string },
  task: TableTask,
  converted: ConvertedChanges,
  previous: LakeTable | undefined,
  position: string,
): Promise<MergeCounts> {
  // Changes typed otherwise than the table would make the commit give its columns new ids, and the table's earlier
  // files would read NULL for them: such a table is read whole instead (a full refresh). A column dropped at the
  // source stays in the table, written NULL from now on; one added comes after the table's own.
  const written = converted.plans.map((p) => ({ name: p.name, type: typeName(p.lakeType) }));
  written.push({ name: SYNCED_AT, type: 'TIMESTAMP WITH TIME ZONE' });
  if (task.softDeletes) written.push({ name: DELETED_AT, type: 'TIMESTAMP WITH TIME ZONE' });
  const held = previous?.snapshot.columns ?? [];
  const inTable = previous ? rowsInTableColumns(written, held, new Set([SYNCED_AT, DELETED_AT])) : [];
  if (!inTable)
    throw new Error(
      `the columns of ${task.key} no longer match its lake table; run lake sync start --full-refresh to read it whole`,
    );
  const stopped = held.filter((c) => !written.some((w) => w.name === c.name));
  const counts: MergeCounts = { replaced: 0, deleted: 0 };
  let truncated = false;
  let net: { rows: string; deletedKeys: string } | undefined;
  const extra = `, TIMESTAMPTZ ${quoteLiteral(input.syncedAt)} AS ${SYNCED_AT}${task.softDeletes ? `, NULL::TIMESTAMPTZ AS ${DELETED_AT}` : ''}`;
  await input.lake.writeSnapshot(
    input.organizationId,
    task.lakeSchema,
    task.lakeTable,
    async (writer) => {
      const connection = await writer.connection();
      await connection.run(`CREATE OR REPLACE TEMP TABLE lake_cdc AS ${changeRowsSql(converted)}`);
      mark(`${task.key}: changes loaded`);
      const facts = (
        await connection.runAndReadAll(
          `SELECT count(*) FILTER (WHERE op = 'T') AS truncates,
                  list(DISTINCT u) FILTER (WHERE u <> '') AS unchanged
             FROM (SELECT op, unnest(string_split(unchanged, ',')) AS u FROM lake_cdc
                   UNION ALL SELECT op, '' FROM lake_cdc)`,
        )
      ).getRowObjectsJS()[0] as { truncates: bigint; unchanged: string[] | null };
      truncated = Number(facts.truncates) > 0;
      mark(`${task.key}: changes summed up`);
      net = netChangesSql(
        converted,
        new Set((facts.unchanged ?? []).map(Number)),
        truncated || !previous
          ? undefined
          : {
              sql: input.lake.rowsSql(previous),
              columns: new Set(previous.snapshot.columns.map((c) => c.name)),
            },
        extra,
      );
      return writer.copy(inTable.length > 0 ? `SELECT ${inTable.join(', ')} FROM (${net.rows})` : net.rows, 0);
    },
    {
      tags: { [CDC_TAG]: position },
      notNull: new Set([...converted.notNull, SYNCED_AT]),
      columnTypes: Object.fromEntries([
        ...converted.plans.filter((p) => isTaggedType(p.lakeType)).map((p) => [p.name, p.lakeType]),
        ...stopped.filter((c) => isTaggedType(c.type)).map((c) => [c.name, c.type]),
      ]),
      // After a TRUNCATE the table is what its later changes left: written whole. Otherwise merged, reading the
      // table's rows for TOAST values left unchanged.
      ...(previous
        ? {
            readsCurrent: true,
            mergeOn: {
              key: converted.lakeKey,
              deletedKeys: () => (net as { deletedKeys: string }).deletedKeys,
              ...(task.softDeletes ? { softDelete: { column: DELETED_AT, at: input.syncedAt } } : {}),
              onMerged: (merged: MergeCounts) => Object.assign(counts, merged),
            },
            replaceWhole: () => truncated,
          }
        : {}),
    },
  );
  return counts;
}

/** A DuckDB type as the catalog describes it (DESCRIBE's spelling of the aliases plans use). */
function typeName(type: string): string {
  return type.replace(/\bTIMESTAMPTZ\b/, 'TIMESTAMP WITH TIME ZONE').replace(/\bTIMETZ\b/, 'TIME WITH TIME ZONE');
}
