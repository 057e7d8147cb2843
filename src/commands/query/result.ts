import { QUERY_ROUTES } from '../../contract/routes.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../exit-codes.js';
import { PAGE_SIZE, printQueryRows, resultFileReader } from './print-rows.js';
import { rowOutput } from './run.js';
import { queryEndedError } from './ended.js';
import { groupDigits } from '../../support/group-digits.js';

/**
 * `lake query result <id>`: a finished query's rows again, in any output format, paged through the API as
 * `lake query` prints them; the end of the asynchronous path (`--wait`, `poll`, `jobs wait`, then `result`).
 */
export async function printResult(
  ctx: CommandContext,
  id: string,
  options: { output?: string; maxRows?: string },
): Promise<void> {
  const { format, maxRows } = rowOutput(ctx, options);
  const client = await ctx.client();
  const query = await client.read(QUERY_ROUTES.getQuery, {
    params: { id },
    query: { format: 'inline', limit: Math.min(PAGE_SIZE, Math.max(1, maxRows)) },
  });
  if (query.status === 'queued' || query.status === 'running') {
    throw new CliError(
      'query_running',
      `Query ${id} is still ${query.status}; it has no rows yet.`,
      EXIT.stillRunning,
      `Wait for it with \`lake jobs wait ${id}\`, then run this again.`,
      { query: id },
    );
  }
  if (query.status !== 'succeeded') throw queryEndedError(query);
  const printed = await printQueryRows(
    client,
    ctx.io,
    query,
    format,
    maxRows,
    { env: ctx.env, enabled: ctx.globals.pager !== false },
    resultFileReader(ctx, client, query.id),
  );
  if (ctx.io.isStderrTTY && format === 'table')
    ctx.io.stderr.write(`(${groupDigits(printed.total)} row${printed.total === 1 ? '' : 's'})\n`);
}
