import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import type { to as CopyTo } from 'pg-copy-streams';
import { castSql, quoteIdentifier, quoteLiteral } from '../engine/duckdb.js';
import { startSourceCopy } from './pg-copy.js';
import { csvLineOptions } from './pg-reads.js';
import type { ColumnPlan } from './pg-types.js';
import { stagedName } from './pg-types.js';
import { SegmentedStaging } from './segments.js';
import type { StagingBudget } from './staging-budget.js';

export interface SourceKeysInput {
  client: pg.Client;
  to: typeof CopyTo;
  /** The plans of the primary key's columns, in key order. */
  keyPlans: readonly ColumnPlan[];
  /** The table's FROM (its quoted name). */
  from: string;
  stagingDir: string;
  base: string;
  signal: AbortSignal;
  bounds: { budget: StagingBudget; table: string; maxSegmentBytes: number };
}

/**
 * Every primary key the source table has now, read in the sync's snapshot (so a row the changed rows hold is
 * among them) and staged as one CSV file under the staging caps. Returns the DuckDB SQL that reads them, typed and
 * named as the lake's key columns (what delete detection compares the lake's keys with), and the bytes staged,
 * which count against the sync's staging budget until released. Only the key columns travel, so the cost follows
 * the key, not the rows.
 */
export async function readSourceKeys(
  input: SourceKeysInput,
): Promise<{ sql: string; stagedFile: string | undefined; stagedBytes: number }> {
  const { copy, stop } = startSourceCopy(
    input.to,
    input.client,
    `COPY (SELECT ${input.keyPlans.map((p) => p.select).join(', ')} FROM ${input.from}) TO STDOUT WITH (FORMAT csv)`,
    input.signal,
  );
  return stageKeys({ ...input, records: copy }).finally(stop);
}

/**
 * Stages a source's key records (CSV, one per row, in the key plans' order) as one file under the staging caps,
 * and returns the DuckDB SQL that reads them typed and named as the lake's key columns: what delete detection
 * compares the lake's keys with, whichever database sent them.
 */
export async function stageKeys(input: {
  keyPlans: readonly ColumnPlan[];
  records: NodeJS.ReadableStream;
  /** The records come as RecordChunks (segments.ts), not bytes. */
  framed?: boolean;
  stagingDir: string;
  base: string;
  bounds: SourceKeysInput['bounds'];
}): Promise<{ sql: string; stagedFile: string | undefined; stagedBytes: number }> {
  let staged = { file: '', longest: 0, bytes: 0 };
  const staging = new SegmentedStaging(
    input.stagingDir,
    `${input.base}.keys`,
    Number.POSITIVE_INFINITY,
    (file, longest, bytes) => void (staged = { file, longest, bytes }),
    () => undefined,
    input.bounds,
    { framed: input.framed === true },
  );
  await pipeline(input.records, staging);
  const stagedFile = staged.file === '' ? undefined : staged.file;
  return { sql: keysSql(input.keyPlans, stagedFile, staged.longest), stagedFile, stagedBytes: staged.bytes };
}

function keysSql(keyPlans: readonly ColumnPlan[], file: string | undefined, longest: number): string {
  const names = keyPlans.map((p, i) => `${p.load(stagedName(i))} AS ${quoteIdentifier(p.name)}`).join(', ');
  if (file === undefined)
    return `SELECT ${keyPlans.map((p) => `${castSql('NULL', p.lakeType)} AS ${quoteIdentifier(p.name)}`).join(', ')} WHERE false`;
  const columns = keyPlans.map((p, i) => `'c${i}': '${p.csvType}'`).join(', ');
  return `SELECT ${names} FROM read_csv(${quoteLiteral(file)}, columns = {${columns}}, header = false, auto_detect = false, quote = '"', escape = '"', allow_quoted_nulls = false, delim = ',', ${csvLineOptions(longest)})`;
}
