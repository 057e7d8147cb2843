import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import type { from as CopyFrom, to as CopyTo } from 'pg-copy-streams';
import { quoteIdentifier, quoteLiteral } from '../../engine/duckdb.js';
import { lakeColumnNames } from '../../sources/lake-names.js';
import { currentColumns, shapesAsTable, valueShapes } from '../pg-columns.js';
import { startSourceCopy } from '../pg-copy.js';
import { csvLineOptions } from '../pg-reads.js';
import { planMergedColumn, stagedName, type ColumnPlan } from '../pg-types.js';
import { SegmentedStaging } from '../segments.js';
import type { StagingBudget } from '../staging-budget.js';
import type { StagedChanges } from './changes.js';

const pgIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** A table's changes as the lake reads them: a CSV of `seq, op, unchanged, columns…`, and the plans of its columns. */
export interface ConvertedChanges {
  file: string;
  longest: number;
  bytes: number;
  plans: ColumnPlan[];
  /** The primary key's lake column names. */
  lakeKey: string[];
  /** The lake names of the columns the source holds NOT NULL. */
  notNull: Set<string>;
  /** The source table's columns now (the sync state keeps them). */
  columns: { name: string; type: string }[];
}

/**
 * Turns a table's staged changes (each type's text output, from the stream) into the exact CSV a full sync reads:
 * the text goes back into PostgreSQL, into a temporary table with the table's column types (every type's text
 * output is its input, so nothing is lost), and comes out through the same column plans as any sync's rows. So a
 * change reads exactly as a copy of the row would. Needs the TEMP privilege on the source's database (PUBLIC has it
 * by default), on a connection that is not read-only.
 */
export async function convertChanges(input: {
  client: pg.Client;
  copy: { to: typeof CopyTo; from: typeof CopyFrom };
  schema: string;
  name: string;
  primaryKey: readonly string[];
  staged: StagedChanges;
  moneyScale: number;
  softDeletes: boolean;
  stagingDir: string;
  base: string;
  budget: StagingBudget;
  tableKey: string;
  signal: AbortSignal;
  /** The lake table's column types now, by lake name: a change is typed as the table is. */
  lakeTypes: ReadonlyMap<string, string>;
}): Promise<ConvertedChanges> {
  const { client } = input;
  const columns = await currentColumns(client, input.schema, input.name);
  if (columns.map((c) => c.name).join('\u0000') !== input.staged.columns.join('\u0000'))
    throw new Error(
      `the columns of ${input.tableKey} changed since its changes were written; the next sync reads it whole`,
    );
  const temp = 'lake_cdc_changes';
  // A column dropped among the changes is in the segments before the drop: kept as text, and not read (the table
  // stops writing it).
  const current = new Set(columns.map((c) => c.name));
  const dropped = [...new Set(input.staged.segments.flatMap((s) => s.columns))].filter((name) => !current.has(name));
  await client.query(`DROP TABLE IF EXISTS pg_temp.${temp}`);
  await client.query(
    `CREATE TEMP TABLE ${temp} (lake_seq bigint, lake_op text, lake_unchanged int[], ${[
      ...columns.map((c) => `${pgIdent(c.name)} ${c.type}`),
      ...dropped.map((name) => `${pgIdent(name)} text`),
    ].join(', ')})`,
  );
  try {
    // Each segment with its own columns (a column added or dropped among the changes): those it lacks are NULL.
    for (const segment of input.staged.segments) {
      const list = ['lake_seq', 'lake_op', 'lake_unchanged', ...segment.columns.map(pgIdent)].join(', ');
      const before = (await client.query<{ seq: string }>(`SELECT coalesce(max(lake_seq), 0) AS seq FROM ${temp}`))
        .rows[0]?.seq;
      await pipeline(
        createReadStream(segment.file),
        client.query(input.copy.from(`COPY ${temp} (${list}) FROM STDIN`)),
      );
      // A TOASTed value left unchanged is marked by its position among the segment's columns: after a column was
      // dropped among the changes, an earlier segment's positions are not the table's now.
      const positions = segment.columns.map((name) => columns.findIndex((c) => c.name === name));
      if (positions.some((p, i) => p !== i))
        await client.query(
          `UPDATE ${temp} SET lake_unchanged = ARRAY(SELECT ($1::int[])[u + 1] FROM unnest(lake_unchanged) u WHERE ($1::int[])[u + 1] >= 0)
            WHERE lake_seq > $2 AND cardinality(lake_unchanged) > 0`,
          [positions, before],
        );
    }
    const lakeNames = lakeColumnNames(
      columns.map((c) => c.name),
      input.softDeletes,
    );
    const shapes = shapesAsTable(
      await valueShapes(client, columns, temp, ''),
      new Map(columns.map((c, i) => [c.name, input.lakeTypes.get(lakeNames[i] as string)])),
    );
    // A changed value that no longer fits the column's type as the table has it.
    if (!shapes)
      throw new Error(
        `a changed value of ${input.tableKey} does not fit its column's lake type; run lake sync start --full-refresh to read the table whole and type it again`,
      );
    const facts = { moneyScale: input.moneyScale, numericShapes: shapes.numeric, arrayDepths: shapes.arrayDepths };
    // Changes merge into the table as it is typed: intervals it holds as text stay text (a full refresh types them).
    const plans = columns.map((c, i) => ({
      ...planMergedColumn(c.name, c.type, input.lakeTypes.get(lakeNames[i] as string), c.enumLabels, facts),
      name: lakeNames[i] as string,
    }));
    let staged = { file: '', longest: 0, bytes: 0 };
    const { copy, stop } = startSourceCopy(
      input.copy.to,
      client,
      `COPY (SELECT lake_seq, lake_op, array_to_string(lake_unchanged, ','), ${plans.map((p) => p.select).join(', ')} FROM ${temp} ORDER BY lake_seq) TO STDOUT WITH (FORMAT csv)`,
      input.signal,
    );
    await pipeline(
      copy,
      new SegmentedStaging(
        input.stagingDir,
        `${input.base}.cdc`,
        Number.POSITIVE_INFINITY,
        (file, longest, bytes) => void (staged = { file, longest, bytes }),
        () => undefined,
        { budget: input.budget, table: input.tableKey, maxSegmentBytes: Number.POSITIVE_INFINITY },
      ),
    ).finally(stop);
    const lakeName = new Map(columns.map((c, i) => [c.name, lakeNames[i] as string]));
    return {
      ...staged,
      columns: columns.map((c) => ({ name: c.name, type: c.type })),
      plans,
      lakeKey: input.primaryKey.map((k) => lakeName.get(k) ?? k),
      notNull: new Set(columns.filter((c) => c.notNull).map((c) => lakeName.get(c.name) as string)),
    };
  } finally {
    await client.query(`DROP TABLE IF EXISTS pg_temp.${temp}`).catch(() => undefined);
  }
}

/**
 * The DuckDB SQL that reads a table's converted changes as rows: `seq`, `op` (I, U, D, T), the positions of the
 * columns a TOASTed value was left unchanged in (`unchanged`, as text: `2,5`), and the lake's columns.
 */
export function changeRowsSql(changes: ConvertedChanges): string {
  const columns = [
    `'seq': 'BIGINT'`,
    `'op': 'VARCHAR'`,
    `'unchanged': 'VARCHAR'`,
    ...changes.plans.map((p, i) => `'c${i}': '${p.csvType}'`),
  ].join(', ');
  return `SELECT seq, op, coalesce(unchanged, '') AS unchanged, ${changes.plans
    .map((p, i) => `${p.load(stagedName(i))} AS ${quoteIdentifier(p.name)}`)
    .join(', ')}
    FROM read_csv(${quoteLiteral(changes.file)}, columns = {${columns}}, header = false, auto_detect = false, quote = '"', escape = '"', allow_quoted_nulls = false, delim = ',', ${csvLineOptions(changes.longest)})`;
}

/**
 * What the changes do to the table, as DuckDB SQL over `lake_cdc` (the change rows) and the table's rows before them
 * (`before`): each key ends as its last change left it, the changes after the last TRUNCATE only. Returns the rows
 * to write (a key's last insert or update, a TOASTed value it left unchanged taken from the key's earlier change in
 * this batch or else from the table), and the keys whose last change is a delete.
 */
export function netChangesSql(
  changes: ConvertedChanges,
  unchangedColumns: ReadonlySet<number>,
  /** The table's rows before the changes, and its columns (a column added among the changes is not there). */
  before: { sql: string; columns: ReadonlySet<string> } | undefined,
  extraColumns: string,
): { rows: string; deletedKeys: string } {
  const keys = changes.lakeKey.map(quoteIdentifier).join(', ');
  const sameKey = (a: string, b: string): string =>
    changes.lakeKey
      .map((k) => `${a}.${quoteIdentifier(k)} IS NOT DISTINCT FROM ${b}.${quoteIdentifier(k)}`)
      .join(' AND ');
  const live = `(SELECT * FROM lake_cdc WHERE op <> 'T' AND seq > (SELECT coalesce(max(seq), 0) FROM lake_cdc WHERE op = 'T'))`;
  const last = `(SELECT * FROM ${live} c QUALIFY row_number() OVER (PARTITION BY ${keys} ORDER BY seq DESC) = 1)`;
  const values = changes.plans.map((p, i) => {
    const column = quoteIdentifier(p.name);
    if (!unchangedColumns.has(i)) return `l.${column}`;
    const marked = (alias: string): string => `list_contains(string_split(${alias}.unchanged, ','), '${i}')`;
    const earlier = `FROM ${live} e WHERE ${sameKey('e', 'l')} AND e.seq < l.seq AND e.op <> 'D' AND NOT ${marked('e')}`;
    const fromTable =
      before && before.columns.has(p.name)
        ? `(SELECT b.${column} FROM (${before.sql}) b WHERE ${sameKey('b', 'l')} LIMIT 1)`
        : `NULL`;
    return `CASE WHEN NOT ${marked('l')} THEN l.${column}
                 WHEN EXISTS (SELECT 1 ${earlier}) THEN (SELECT e.${column} ${earlier} ORDER BY e.seq DESC LIMIT 1)
                 ELSE ${fromTable} END AS ${column}`;
  });
  return {
    rows: `SELECT ${values.join(', ')}${extraColumns} FROM ${last} l WHERE l.op <> 'D'`,
    deletedKeys: `SELECT ${keys} FROM ${last} l WHERE l.op = 'D'`,
  };
}
