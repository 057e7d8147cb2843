import type { Command } from 'commander';
import type { CommandContext } from '../context.js';
import type { RunOptions } from './run.js';
import type { QueryListOptions } from './list.js';
import { pageOptions } from '../listing.js';

// Each verb's code is loaded when it runs, so `lake --help` and other commands do not pay for it.

export function registerQuery(program: Command, ctx: CommandContext): void {
  const query = program
    .command('query')
    .description('run read-only SQL against the lake (`lake query "select …"` is `lake query run`)');

  query
    .command('run', { isDefault: true })
    .description('submit SQL, wait for it, and print the rows')
    .argument('[sql]', 'the SQL; - reads standard input')
    .option('-f, --file <file>', 'read the SQL from a file (- for standard input)')
    .option(
      '--output <format>',
      'table, vertical, csv, tsv, json, ndjson or markdown (default: table on a terminal, csv in a pipe)',
    )
    .option('--max-rows <n>', 'print at most n rows (default: all; 1000 for table output)')
    .option('--wait <seconds>', 'wait at most this long; if still running, print the id and exit 3')
    .option('--continue-on-error', 'in a script of several statements, run the rest after one fails')
    .option('--print-id', "print each query's id on stderr as soon as it is submitted (for scripts)")
    .option('--schema <schema>', 'resolve unqualified table names in this schema (default: LAKE_SCHEMA, the profile)')
    .option('--timeout <seconds>', "stop the query on the server after this long (the server's limit caps it)")
    .option('--row-limit <n>', 'the server keeps at most n rows of the result (stderr says when it cut)')
    .option('--byte-limit <bytes>', 'the server keeps the first rows whose result file fits in this many bytes')
    .option('--dry-run', 'check and bind the SQL without running it: print its columns and their types')
    .option(
      '--tag <tag>',
      'label the query for cost attribution (repeatable; lake usage sums by tag)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '-p, --param <name[:type]=value>',
      'a value for $name (1=, 2=… for ? and $1); :type is int, bigint, decimal, double, bool, date, timestamp or string; without =value, NULL (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .action(async (sql: string | undefined, options: RunOptions) =>
      (await import('./run.js')).runQuery(ctx, sql, options),
    );

  pageOptions(
    query.command('ls').description('query history, newest first: your queries (owners and admins: --creator all)'),
  )
    .option('--status <status>', 'only queries in this status: queued, running, succeeded, failed or cancelled')
    .option('--since <when>', 'only queries created since: an age (30m, 2h, 7d), a date (2026-11-24) or epoch seconds')
    .option('--before <when>', 'only queries created before this time (same forms as --since)')
    .option('--creator <who>', "me (default), all, or a user's or key's id (owners and admins)")
    .option('--search <text>', 'only queries whose SQL holds this text (any case)')
    .option('--tag <tag>', 'only queries with this tag')
    .action(async (options: QueryListOptions) => (await import('./list.js')).listQueries(ctx, options));

  query
    .command('poll')
    .description("show a query's status (exit 0 succeeded, 1 failed, 3 still running)")
    .argument('<id>', 'query id (qr_…)')
    .action(async (id: string) => (await import('./poll.js')).pollQuery(ctx, id));

  query
    .command('result')
    .description("print a finished query's rows again, in any output format")
    .argument('<id>', 'query id (qr_…)')
    .option(
      '--output <format>',
      'table, vertical, csv, tsv, json, ndjson or markdown (default: table on a terminal, csv in a pipe)',
    )
    .option('--max-rows <n>', 'print at most n rows (default: all; 1000 for table output)')
    .action(async (id: string, options: { output?: string; maxRows?: string }) =>
      (await import('./result.js')).printResult(ctx, id, options),
    );

  query
    .command('download')
    .description(
      "download a query's result (Parquet, CSV or Arrow), resuming after interruptions and checking its size",
    )
    .argument('<id>', 'query id (qr_…)')
    .option('-o, --output <file>', 'where to write (default <id>.parquet, .csv or .arrows; - for stdout)')
    .option(
      '--format <format>',
      'parquet (the default), csv (RFC 4180, with a header), arrow (an Arrow IPC stream) or arrow_zstd (compressed)',
    )
    .action(async (id: string, options: { output?: string; format?: string }) =>
      (await import('./download.js')).downloadQuery(ctx, id, options.output, options.format),
    );
}
