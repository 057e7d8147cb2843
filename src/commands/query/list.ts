import { QUERY_ROUTES } from '../../contract/routes.js';
import type { CommandContext } from '../context.js';
import { oneLine, printList, when, type PageOptions } from '../listing.js';
import { sinceSeconds } from '../since.js';

export interface QueryListOptions extends PageOptions {
  status?: string;
  since?: string;
  before?: string;
  creator?: string;
  search?: string;
  tag?: string;
}

/** `lake query ls`: query history, newest first, with the filters GET /queries takes. */
export async function listQueries(ctx: CommandContext, options: QueryListOptions): Promise<void> {
  // On a terminal the SQL gets what the other columns leave; in a pipe it is whole.
  const sqlWidth = ctx.io.isStdoutTTY ? Math.max(20, ctx.io.terminalWidth - 90) : Number.POSITIVE_INFINITY;
  await printList(ctx, options, {
    route: QUERY_ROUTES.listQueries,
    query: {
      status: options.status,
      created_after: options.since === undefined ? undefined : sinceSeconds(options.since),
      created_before: options.before === undefined ? undefined : sinceSeconds(options.before, '--before'),
      creator: options.creator,
      q: options.search,
      tag: options.tag,
    },
    columns: ['id', 'status', 'created', 'duration_ms', 'tags', 'sql', 'error'],
    row: (q) => ({
      id: q.id,
      status: q.status,
      created: when(q.created),
      duration_ms: q.duration_ms ?? null,
      tags: q.tags?.join(' ') ?? null,
      sql: oneLine(q.sql, sqlWidth),
      error: q.error?.code ?? null,
    }),
  });
}
