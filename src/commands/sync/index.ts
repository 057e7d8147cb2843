import type { Command } from 'commander';
import type { CommandContext } from '../context.js';

export function registerSync(program: Command, ctx: CommandContext): void {
  const sync = program.command('sync').description('sync sources into the lake and watch them');
  const idOf = async (ref: string): Promise<string> => (await import('../resolve.js')).resolveId(ctx, 'source', ref);
  sync
    .command('start')
    .description('start a sync of a source; with --follow, watch every table live and exit by outcome')
    .argument('<source>', 'source id (src_…) or name')
    .option('--follow', 'show progress live until the sync ends (exit 0 succeeded, 1 failed or cancelled)')
    .option('--tables <list>', 'only these tables, comma-separated schema.table')
    .option('--full-refresh', 'replace every table whole, incremental ones too')
    .option('--detach', 'return at once; in local mode the sync then waits in the queue for lake serve')
    .action(
      async (source: string, options: { follow?: boolean; tables?: string; fullRefresh?: boolean; detach?: boolean }) =>
        (await import('./verbs.js')).startSync(ctx, source, options, idOf),
    );
  sync
    .command('status')
    .description("the latest sync of a source: status and every table's phase and rows")
    .argument('<source>', 'source id (src_…) or name')
    .action(async (source: string) => (await import('./verbs.js')).syncStatus(ctx, await idOf(source)));
}
