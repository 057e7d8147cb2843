import type { LakeClient } from '../../client/lake-client.js';
import type { CommandContext } from '../context.js';
import { paletteFor } from '../../render/colors.js';
import type { IOStreams } from '../../render/iostreams.js';
import { pagedOutput } from '../../render/pager.js';
import { createRowWriter, type OutputFormat } from '../../render/rows.js';
import { QUERY_ROUTES } from '../../contract/routes.js';
import type { QueryPage } from './wait.js';
import { groupDigits } from '../../support/group-digits.js';

export const PAGE_SIZE = 1000;

/** The result of an EXPLAIN: DuckDB's two columns. */
const isPlan = (columns: readonly string[] | undefined): boolean =>
  columns?.length === 2 && columns[0] === 'explain_key' && columns[1] === 'explain_value';

/** Reads up to `limit` rows of the result from its file and hands them to the sink chunk by chunk. */
export type ResultFileReader = (
  limit: number,
  sink: import('./result-file-rows.js').ResultSink,
) => Promise<number | undefined>;

/** The reader of a query's result file; the module (and DuckDB with it) loads only when a result is that large. */
export function resultFileReader(ctx: CommandContext, client: LakeClient, queryId: string): ResultFileReader {
  return async (limit, sink) =>
    (await import('./result-file-rows.js')).readResultFile(ctx, client, queryId, limit, sink);
}

export interface PrintedRows {
  printed: number;
  total: number;
  truncated: boolean;
}

/**
 * Streams every page of a succeeded query to stdout in the chosen format, holding one page at a time, and stops
 * at maxRows. A truncation is always reported on stderr, never silent.
 */
export async function printQueryRows(
  client: LakeClient,
  io: IOStreams,
  first: QueryPage,
  format: OutputFormat,
  maxRows: number,
  /** Long output on a terminal goes through the pager unless this is off (--no-pager). */
  paging: {
    env: Record<string, string | undefined>;
    enabled: boolean;
    verticalHint?: string;
    /** What to do for the rows past maxRows, in the caller's words (the shell's \o FILE). */
    moreHint?: string;
    handover?: <T>(use: () => Promise<T>) => Promise<T>;
  } = {
    env: {},
    enabled: false,
  },
  /** Reads up to `limit` rows from the result's file, chunk by chunk: for results of more than a couple of pages. */
  readFile?: ResultFileReader,
): Promise<PrintedRows> {
  const output = pagedOutput(io, paging.env, paging.enabled, paging.handover);
  // A plan is text drawn with box characters: in a table its lines would be squeezed into cells; it is printed as is.
  if (format === 'table' && isPlan(first.columns)) {
    for (const row of first.data ?? []) output.stream.write(`${String(row.explain_value ?? '').replace(/\n?$/, '\n')}`);
    await output.finish();
    return { printed: first.data?.length ?? 0, total: first.row_count ?? 0, truncated: false };
  }
  const writer = createRowWriter(format, output.stream, paletteFor(io, 'stdout'), {
    ...(paging.verticalHint ? { verticalHint: paging.verticalHint } : {}),
  });
  const total = first.row_count ?? 0;
  writer.begin(first.columns ?? []);
  let printed = 0;
  const wanted = Math.min(maxRows, total);
  if (readFile && first.has_more && wanted - (first.data?.length ?? 0) > PAGE_SIZE) {
    // Past a couple of pages, one download of the result file and DuckDB reading it beat thousands of page requests.
    const stream = output.stream as NodeJS.WritableStream & { writableNeedDrain?: boolean };
    // Rows arrive faster than a pipe may take them: wait for it rather than hold the result in memory.
    const drained = async (): Promise<void> => {
      if (stream.writableNeedDrain) await new Promise((resolve) => stream.once('drain', resolve));
    };
    const lines = await readFile(wanted < total ? wanted : Number.POSITIVE_INFINITY, {
      rows: async (rows) => {
        writer.write(rows);
        printed += rows.length;
        await drained();
      },
      ...(format === 'csv' || format === 'tsv'
        ? {
            text: {
              format,
              write: async (bytes: Buffer) => {
                stream.write(bytes);
                await drained();
              },
            },
          }
        : {}),
    });
    if (lines !== undefined) printed = lines;
  } else {
    let page: QueryPage = first;
    for (;;) {
      const rows = page.data ?? [];
      const room = maxRows - printed;
      writer.write(rows.length > room ? rows.slice(0, room) : rows);
      printed += Math.min(rows.length, room);
      if (printed >= maxRows || !page.has_more || !page.next_cursor) break;
      page = await client.read(QUERY_ROUTES.getQuery, {
        params: { id: first.id },
        query: { format: 'inline', limit: Math.min(PAGE_SIZE, maxRows - printed), starting_after: page.next_cursor },
      });
    }
  }
  writer.end();
  await output.finish();
  const truncated = printed < total;
  if (truncated) {
    const shown = `lake: showing the first ${groupDigits(printed)} of ${groupDigits(total)} rows`;
    io.stderr.write(
      paging.moreHint
        ? `${shown}; ${paging.moreHint}\n`
        : `${shown} (--max-rows ${maxRows}); the full result: lake query download ${first.id}\n`,
    );
  }
  return { printed, total, truncated };
}
