import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import { downloadQuery } from './download.js';
import { pollQuery } from './poll.js';
import { addRunOptions, runQuery, type RunOptions } from './run.js';

export function registerQuery(program: Command, ctx: CommandContext): void {
  const query = program
    .command('query')
    .description('run read-only SQL against the lake (`lake query "select …"` is `lake query run`)');

  addRunOptions(
    query
      .command('run', { isDefault: true })
      .description('submit SQL, wait for it, and print the rows')
      .argument('[sql]', 'the SQL; - reads standard input'),
  ).action((sql: string | undefined, options: RunOptions) => runQuery(ctx, sql, options));

  query
    .command('poll')
    .description('show a query\'s status (exit 0 succeeded, 1 failed, 3 still running)')
    .argument('<id>', 'query id (qr_…)')
    .action((id: string) => pollQuery(ctx, id));

  query
    .command('download')
    .description('download a query\'s Parquet result, resuming after interruptions and checking its size')
    .argument('<id>', 'query id (qr_…)')
    .option('-o, --output <file>', 'where to write (default <id>.parquet; - for stdout)')
    .action((id: string, options: { output?: string }) => downloadQuery(ctx, id, options.output));
}
