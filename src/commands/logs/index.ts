import type { Command } from 'commander';
import { printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { usageError } from '../exit-codes.js';

interface Entry {
  id: string;
  source: string;
  kind: string;
  table: string | null;
  message: string;
  created: number;
}

/** How often --follow looks for new entries: gentle on the service, and well inside the rate limit. */
const FOLLOW_EVERY_MS = 3000;

function parseSince(text: string): number {
  const relative = /^(\d+)([smhd])$/.exec(text);
  if (relative) return Math.floor(Date.now() / 1000) - Number(relative[1]) * { s: 1, m: 60, h: 3600, d: 86_400 }[relative[2] as 's' | 'm' | 'h' | 'd'];
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed)) throw usageError(`--since takes a time (2026-11-01T00:00Z) or an age (30m, 2h, 7d), not '${text}'.`);
  return Math.floor(parsed / 1000);
}

export function registerLogs(program: Command, ctx: CommandContext): void {
  program
    .command('logs')
    .description('source errors and schema changes recorded by syncs, printed oldest first as a log reads')
    .option('--source <id>', 'only this source')
    .option('--kind <kind>', 'error or schema_change')
    .option('--since <when>', 'from this time or age on (30m, 2h, 7d, or a timestamp)')
    .option('--limit <n>', 'at most this many (1-200)', '50')
    .option('--follow', 'keep printing new entries as they are recorded')
    .action(async (o: { source?: string; kind?: string; since?: string; limit: string; follow?: boolean }) => {
      const client = await ctx.client();
      const query = { source: o.source, kind: o.kind, since: o.since === undefined ? undefined : parseSince(o.since), limit: Number(o.limit) };
      const line = (e: Entry): string =>
        ctx.json ? JSON.stringify(e) : `${new Date(e.created * 1000).toISOString().replace('.000Z', 'Z')}\t${e.source}\t${e.kind}\t${e.table ?? ''}\t${e.message}`;
      const first = await client.get<{ data: Entry[] }>('/logs', query);
      if (ctx.json && !o.follow) return printJson(ctx.io, first);
      // Oldest first on screen, as a log reads.
      for (const e of [...first.data].reverse()) ctx.io.stdout.write(`${line(e)}\n`);
      if (!o.follow) return;
      const seen = new Set(first.data.map((e) => e.id));
      let since = first.data[0]?.created ?? Math.floor(Date.now() / 1000);
      for (;;) {
        await new Promise((r) => setTimeout(r, FOLLOW_EVERY_MS));
        const fresh = (await client.get<{ data: Entry[] }>('/logs', { ...query, since, limit: 200 })).data.filter((e) => !seen.has(e.id)).reverse();
        for (const e of fresh) {
          seen.add(e.id);
          since = Math.max(since, e.created);
          ctx.io.stdout.write(`${line(e)}\n`);
        }
      }
    });
}
