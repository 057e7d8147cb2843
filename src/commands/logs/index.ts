import type { Command } from 'commander';
import { printJson } from '../../render/record.js';
import type { LogEntryObject } from '../../contract/types.js';
import type { CommandContext } from '../context.js';
import { usageError } from '../exit-codes.js';
import { sinceSeconds } from '../since.js';

type Entry = LogEntryObject;

/** How often --follow looks for new entries: gentle on the service, and well inside the rate limit. */
const FOLLOW_EVERY_MS = 3000;

export function registerLogs(program: Command, ctx: CommandContext): void {
  program
    .command('logs')
    .description('source errors and schema changes recorded by syncs, printed oldest first as a log reads')
    .option('--source <id>', 'only this source')
    .option('--kind <kind>', 'error or schema_change')
    .option('--since <when>', 'from this time or age on (30m, 2h, 7d, or a timestamp)')
    .option('--limit <n>', 'at most this many (1-200)', '50')
    .option('--follow', 'keep printing new entries as they are recorded')
    .option('--output <format>', 'table, vertical, csv, tsv, json, ndjson or markdown')
    .action(
      async (o: {
        source?: string;
        kind?: string;
        since?: string;
        limit: string;
        follow?: boolean;
        output?: string;
      }) => {
        const { assertFormatsAgree } = await import('../../render/output-format.js');
        try {
          assertFormatsAgree(ctx.json, o.output, o.follow ? ['json', 'ndjson'] : ['json']);
        } catch (error) {
          throw usageError((error as Error).message);
        }
        const [{ SOURCE_ROUTES }, { checkedLimit, checkedQuery }] = await Promise.all([
          import('../../contract/routes.js'),
          import('../flag-values.js'),
        ]);
        const checked = checkedQuery(SOURCE_ROUTES.listLogs, {
          kind: o.kind,
          since: o.since === undefined ? undefined : sinceSeconds(o.since),
          limit: checkedLimit(o.limit, 50, 200),
        });
        const client = await ctx.client();
        const source =
          o.source === undefined ? undefined : await (await import('../resolve.js')).resolveId(ctx, 'source', o.source);
        const query = { ...checked, source };
        const first = await client.read(SOURCE_ROUTES.listLogs, { query });
        if (ctx.json && !o.follow) return printJson(ctx.io, first);
        // Rows like every listing (a table on a terminal, CSV with a header in a pipe); --follow --json: NDJSON.
        const [{ createRowWriter }, { paletteFor }, { resolveOutputFormat }] = await Promise.all([
          import('../../render/rows.js'),
          import('../../render/colors.js'),
          import('../../render/output-format.js'),
        ]);
        const format = resolveOutputFormat(ctx.io, { flag: o.output, env: ctx.env.LAKE_OUTPUT });
        // A table is drawn once, at the end: a followed log on a terminal prints tab-separated lines as they come.
        const writer = ctx.json
          ? undefined
          : createRowWriter(
              o.follow && format === 'table' ? 'tsv' : format,
              ctx.io.stdout,
              paletteFor(ctx.io, 'stdout'),
            );
        const print = (entries: Entry[]): void => {
          if (!writer) for (const e of entries) ctx.io.stdout.write(`${JSON.stringify(e)}\n`);
          else
            writer.write(
              entries.map((e) => ({
                created: new Date(e.created * 1000).toISOString().replace('.000Z', 'Z'),
                source: e.source,
                kind: e.kind,
                table: e.table ?? '',
                message: e.message,
              })),
            );
        };
        writer?.begin(['created', 'source', 'kind', 'table', 'message']);
        // Oldest first, as a log reads.
        print([...first.data].reverse());
        if (!o.follow) {
          writer?.end();
          return;
        }
        const seen = new Set(first.data.map((e) => e.id));
        let since = first.data[0]?.created ?? Math.floor(Date.now() / 1000);
        for (;;) {
          await new Promise((r) => setTimeout(r, FOLLOW_EVERY_MS));
          const fresh = (await client.read(SOURCE_ROUTES.listLogs, { query: { ...query, since, limit: 200 } })).data
            .filter((e) => !seen.has(e.id))
            .reverse();
          for (const e of fresh) {
            seen.add(e.id);
            since = Math.max(since, e.created);
          }
          print(fresh);
        }
      },
    );
}
