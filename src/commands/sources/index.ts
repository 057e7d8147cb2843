import { pageOptions, type PageOptions } from '../listing.js';
import type { Command } from 'commander';
import type { CommandContext } from '../context.js';

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Whether the command line named `flag` (as `--flag` or `--flag=value`), whatever commander kept of it. */
function given(command: Command, flag: string): boolean {
  let root = command;
  while (root.parent) root = root.parent;
  const args = (root as Command & { rawArgs: string[] }).rawArgs;
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === flag || arg.startsWith(`${flag}=`));
}

const SCHEDULE_HELP =
  'sync by itself under lake serve: an interval (15m, 1h, 1h30m, 2d) or a cron expression ("0 6 * * 1-5")';

// Each verb's code is loaded when it runs.
export function registerSources(program: Command, ctx: CommandContext): void {
  const verbs = async () => import('./verbs.js');
  /** An id, or the source's name (resolved against the list of sources). */
  const idOf = async (ref: string): Promise<string> => (await import('../resolve.js')).resolveId(ctx, 'source', ref);
  const sources = program
    .command('sources')
    .description('connect data sources (PostgreSQL, MySQL and MariaDB, sample data) and manage them');

  pageOptions(sources.command('ls').description('list sources, newest first')).action(async (o: PageOptions) =>
    (await verbs()).listSources(ctx, o),
  );
  sources
    .command('get')
    .description('show a source: settings, credentials set, tables, latest sync')
    .argument('<id>', 'source id (src_…) or name')
    .action(async (id: string) => (await verbs()).getSource(ctx, await idOf(id)));

  sources
    .command('create')
    .description('create a source; the password comes from --password-stdin or a hidden prompt, never a flag')
    .option('--connector <name>', 'postgres, mysql, sample, … (lake connectors ls)')
    .option('--name <name>', 'a name to tell it apart')
    .option(
      '--config <key=value>',
      'a setting, repeatable (e.g. --config host=db.internal --config database=shop)',
      collect,
    )
    .option('--from-file <file>', 'the whole request body as JSON (as for POST /sources)')
    .option('--password-stdin', 'read the password from standard input')
    .option('--no-password', 'the source has no password (trust or certificate authentication)')
    .option('--schedule <when>', SCHEDULE_HELP)
    .option('--time-zone <zone>', "a cron schedule's IANA time zone (default UTC)")
    .action(async (o: Record<string, unknown>) => (await verbs()).createSource(ctx, o));

  sources
    .command('update')
    .description('change settings, credentials or tables')
    .argument('<id>', 'source id or name')
    .option('--name <name>', 'a new name')
    .option('--config <key=value>', 'a setting, repeatable', collect)
    .option('--password-stdin', 'read a new password from standard input')
    .option('--enable <schema.table>', 'sync this table, repeatable', collect)
    .option('--disable <schema.table>', 'stop syncing this table, repeatable', collect)
    .option(
      '--incremental <schema.table:cursor>',
      'sync this table incrementally by a cursor column, repeatable',
      collect,
    )
    .option('--full <schema.table>', 'sync this table by full refresh, repeatable', collect)
    .option(
      '--cdc <schema.table>',
      "sync this table's changes from the source's log (PostgreSQL's logical replication, MySQL's binary log; deletes included), repeatable",
      collect,
    )
    .option(
      '--detect-deletes <schema.table>',
      'an incremental table: remove lake rows deleted in the source (reads its keys each sync), repeatable',
      collect,
    )
    .option('--keep-deletes <schema.table>', 'stop removing rows deleted in the source, repeatable', collect)
    .option('--schedule <when>', SCHEDULE_HELP)
    .option('--time-zone <zone>', "a cron schedule's IANA time zone (default UTC)")
    .option('--no-schedule', 'sync only when asked (lake sync start)')
    .option('--from-file <file>', 'the PATCH body as JSON')
    .action(async (id: string, o: Record<string, unknown>, command: Command) => {
      // Both set one option, so commander would keep whichever came last and drop the other without a word.
      if (given(command, '--schedule') && given(command, '--no-schedule'))
        throw (await import('../exit-codes.js')).usageError(
          '--schedule and --no-schedule ask for opposite things; give one of them.',
        );
      await (await verbs()).updateSource(ctx, await idOf(id), o);
    });

  sources
    .command('pause')
    .description('stop syncs of a source')
    .argument('<id>', 'source id or name')
    .action(async (id: string) => (await verbs()).setPaused(ctx, await idOf(id), true));
  sources
    .command('resume')
    .description('let a paused source sync again')
    .argument('<id>', 'source id or name')
    .action(async (id: string) => (await verbs()).setPaused(ctx, await idOf(id), false));
  sources
    .command('test')
    .description('test the connection live (exit 1 when it fails)')
    .argument('<id>', 'source id or name')
    .action(async (id: string) => (await verbs()).testSource(ctx, await idOf(id)));
  sources
    .command('delete')
    .description('delete a source (its lake tables stay)')
    .argument('<id>', 'source id or name')
    .action(async (id: string) => (await verbs()).deleteSource(ctx, await idOf(id)));

  const connectors = program.command('connectors').description('the kinds of source lake knows');
  connectors
    .command('ls')
    .description('list connectors and whether lake sources create takes them')
    .option('--output <format>', 'table, vertical, csv, tsv, json, ndjson or markdown')
    .action(async (o: { output?: string }) => (await verbs()).listConnectors(ctx, o));
  connectors
    .command('get')
    .description("a connector's settings, which are credentials, and what each means")
    .argument('<name>', 'connector name (postgres, mysql, sample, …)')
    .action(async (name: string) => (await verbs()).getConnector(ctx, name));
}
