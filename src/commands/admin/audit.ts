import type { Command } from 'commander';
import { printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { sinceSeconds } from '../since.js';

/** Actors with no person behind them, by what they are. */
const ACTOR_LABEL: Partial<Record<string, string>> = {
  local_admin: 'lake admin',
  operator: 'operator',
  anonymous: 'unauthenticated',
};

export function registerAdminAudit(admin: Command, ctx: CommandContext): void {
  admin
    .command('audit')
    .description("the organization's audit log (owners): who created or revoked credentials, changed grants, sources…")
    .option('--action <action>', 'only this action (pat.created, source.credentials_changed, …)')
    .option('--actor <id>', 'only what this credential or user did')
    .option('--org <id>', 'the operator (opr_ token): only this organization’s events')
    .option('--since <when>', 'from this time or age on (30m, 2h, 7d, or a timestamp)')
    .option('--limit <n>', 'at most this many, newest (1-200)', '50')
    .option('--output <format>', 'table, vertical, csv, tsv, json, ndjson or markdown')
    .action(
      async (o: { action?: string; actor?: string; org?: string; since?: string; limit: string; output?: string }) => {
        const [{ SERVICE_ROUTES }, { checkedLimit, checkedQuery }] = await Promise.all([
          import('../../contract/routes.js'),
          import('../flag-values.js'),
        ]);
        const limit = checkedLimit(o.limit, 50, 200);
        const page = await (
          await ctx.client()
        ).read(SERVICE_ROUTES.listAuditEvents, {
          // An action no event has is a usage error naming the ones there are, not an empty log.
          query: checkedQuery(SERVICE_ROUTES.listAuditEvents, {
            action: o.action,
            actor: o.actor,
            organization: o.org,
            since: o.since === undefined ? undefined : sinceSeconds(o.since),
            limit,
          }),
        });
        if (ctx.json) return printJson(ctx.io, page);
        const [{ createRowWriter }, { paletteFor }, { resolveOutputFormat }] = await Promise.all([
          import('../../render/rows.js'),
          import('../../render/colors.js'),
          import('../../render/output-format.js'),
        ]);
        const format = resolveOutputFormat(ctx.io, { flag: o.output, env: ctx.env.LAKE_OUTPUT });
        const writer = createRowWriter(format, ctx.io.stdout, paletteFor(ctx.io, 'stdout'));
        // The columns stay what scripts read; the operator's view across organizations has them in --json.
        writer.begin(['created', 'action', 'actor', 'target', 'request', 'address']);
        // Oldest first, as a log reads.
        writer.write(
          [...page.data].reverse().map((e) => ({
            created: new Date(e.created * 1000).toISOString().replace('.000Z', 'Z'),
            action: e.action,
            actor: ACTOR_LABEL[e.actor.kind] ?? e.actor.user ?? e.actor.credential ?? '',
            target: `${e.target.type} ${e.target.id}`,
            request: e.actor.request_id ?? '',
            address: e.actor.client_address ?? '',
          })),
        );
        writer.end();
      },
    );
}
