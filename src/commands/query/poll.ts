import { printFields, printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { QUERY_ROUTES } from '../../contract/routes.js';

/** One look at a query; the exit code tells the status (0 succeeded, 1 failed or cancelled, 3 still running). */
export async function pollQuery(ctx: CommandContext, id: string): Promise<void> {
  const query = await (await ctx.client()).read(QUERY_ROUTES.getQuery, { params: { id } });
  if (ctx.json) printJson(ctx.io, query);
  else {
    printFields(ctx.io, [
      ['id', query.id],
      ['status', query.status],
      ['sql', query.sql],
      ['created', new Date(query.created * 1000).toISOString()],
      ...(query.duration_ms === undefined ? [] : ([['duration', `${query.duration_ms} ms`]] as [string, unknown][])),
      ...(query.files
        ? query.files.map((f) => ['result', `${f.bytes} bytes (lake query download ${query.id})`] as [string, unknown])
        : []),
      ...(query.error ? ([['error', query.error.message]] as [string, unknown][]) : []),
    ]);
  }
  if (query.status === 'running' || query.status === 'queued') ctx.exitCode = EXIT.stillRunning;
  else if (query.status !== 'succeeded') ctx.exitCode = EXIT.failed;
}
