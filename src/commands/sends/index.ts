import { pageOptions, type PageOptions } from '../listing.js';
import type { Command } from 'commander';
import type { CommandContext } from '../context.js';

// Each verb's code is loaded when it runs.
export function registerSends(program: Command, ctx: CommandContext): void {
  const verbs = async () => import('./verbs.js');
  /** An id, or the send's name (resolved against the list of sends). */
  const idOf = async (ref: string): Promise<string> => (await import('../resolve.js')).resolveId(ctx, 'send', ref);
  const sends = program
    .command('sends')
    .description('deliver query results to a PostgreSQL table or a webhook, on demand or on a schedule');

  pageOptions(sends.command('ls').description('list sends, newest first')).action(async (o: PageOptions) =>
    (await verbs()).listSends(ctx, o),
  );
  sends
    .command('get')
    .description('show a send: its SQL, destination, schedule and last run')
    .argument('<id>', 'send id (snd_…) or name')
    .action(async (id: string) => (await verbs()).getSend(ctx, await idOf(id)));

  sends
    .command('create')
    .description('create a send; a database password comes from --password-stdin or a hidden prompt, never a flag')
    .option('--name <name>', 'a name to tell it apart')
    .option('--sql <sql>', 'the query whose result is sent')
    .option('--sql-file <file>', 'read the query from a file')
    .option('--to <type>', 'postgres or webhook')
    .option('--url <url>', 'webhook: the http(s) URL to POST batches to')
    .option('--format <format>', 'webhook: json (default) or ndjson')
    .option('--batch-size <n>', 'webhook: rows per request (1-10000, default 500)')
    .option(
      '--secret-stdin',
      'webhook: read the signing secret from standard input (otherwise one is made and shown once)',
    )
    .option('--host <host>', 'postgres: server host')
    .option('--port <port>', 'postgres: server port (default 5432)')
    .option('--database <name>', 'postgres: database')
    .option('--user <user>', 'postgres: user')
    .option('--password-stdin', 'postgres: read the password from standard input')
    .option('--no-password', 'postgres: the destination has no password')
    .option('--ssl-mode <mode>', 'postgres: disable (default), require or verify-full')
    .option('--schema <schema>', 'postgres: schema of the table (default public)')
    .option('--table <table>', 'postgres: the table, created when missing')
    .option('--mode <mode>', 'postgres: upsert (default, needs --key) or replace')
    .option('--key <columns>', 'postgres: comma-separated columns that identify a row')
    .option('--every <minutes>', 'run on a schedule, every this many minutes (lake serve runs schedules)')
    .option('--paused', 'create it paused')
    .option('--from-file <file>', 'the whole request body as JSON (as for POST /sends)')
    .action(async (o: Record<string, unknown>) => (await verbs()).createSend(ctx, o));

  sends
    .command('pause')
    .description("stop a send's schedule and manual runs")
    .argument('<id>', 'send id or name')
    .action(async (id: string) => (await verbs()).setPaused(ctx, await idOf(id), true));
  sends
    .command('resume')
    .description('let a paused send run again')
    .argument('<id>', 'send id or name')
    .action(async (id: string) => (await verbs()).setPaused(ctx, await idOf(id), false));
  sends
    .command('run')
    .description('run a send now and wait for the outcome (exit 0 succeeded, 1 failed or cancelled)')
    .argument('<id>', 'send id or name')
    .action(async (id: string) => (await verbs()).runSend(ctx, await idOf(id)));
  pageOptions(
    sends
      .command('runs')
      .description("a send's runs, newest first, with status and rows sent")
      .argument('<id>', 'send id or name'),
  ).action(async (id: string, o: PageOptions) => (await verbs()).listRuns(ctx, await idOf(id), o));
  sends
    .command('delete')
    .description('delete a send and its run history (delivered data stays)')
    .argument('<id>', 'send id or name')
    .action(async (id: string) => (await verbs()).deleteSend(ctx, await idOf(id)));
}
