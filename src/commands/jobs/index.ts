import { pageOptions } from '../listing.js';
import type { JobListOptions } from './verbs.js';
import type { Command } from 'commander';
import type { CommandContext } from '../context.js';

// Each verb's code is loaded when it runs.
export function registerJobs(program: Command, ctx: CommandContext): void {
  const jobs = program
    .command('jobs')
    .description('the durable record of asynchronous work: list, follow, cancel, collect');

  pageOptions(jobs.command('ls').description("list jobs, newest first, with how long each ran and a query's SQL"))
    .option('--status <status>', 'only jobs in this status: queued, running, succeeded, failed or cancelled')
    .option('--kind <kind>', 'only jobs of this kind: query, sync or send')
    .option('--since <when>', 'only jobs created since: an age (30m, 2h, 7d), a date (2026-11-24) or epoch seconds')
    .action(async (options: JobListOptions) => (await import('./verbs.js')).listJobs(ctx, options));

  jobs
    .command('get')
    .description('show one job')
    .argument('<id>', 'job id (the id of the work, such as qr_…)')
    .action(async (id: string) => (await import('./verbs.js')).getJob(ctx, id));

  jobs
    .command('wait')
    .description('wait for a job to finish; exit 0 succeeded, 1 failed or cancelled, 3 still running at --timeout')
    .argument('<id>', 'job id')
    .option('--timeout <seconds>', 'stop waiting after this long')
    .action(async (id: string, options: { timeout?: string }) =>
      (await import('./verbs.js')).waitJob(ctx, id, options),
    );

  jobs
    .command('events')
    .description("follow a job's events live until it ends, then show its final state")
    .argument('<id>', 'job id')
    .action(async (id: string) => (await import('./verbs.js')).jobEvents(ctx, id));

  jobs
    .command('cancel')
    .description('cancel queued or running work')
    .argument('<id>', 'job id')
    .action(async (id: string) => (await import('./verbs.js')).cancelJob(ctx, id));

  jobs
    .command('result')
    .description("download a succeeded query job's result, Parquet or CSV (freshly signed, resumable)")
    .argument('<id>', 'job id')
    .option('-o, --output <file>', 'where to write (default <id>.parquet, .csv or .arrows; - for stdout)')
    .option(
      '--format <format>',
      'parquet (the default), csv (RFC 4180, with a header), arrow (an Arrow IPC stream) or arrow_zstd (compressed)',
    )
    .action(async (id: string, options: { output?: string; format?: string }) =>
      (await import('./verbs.js')).jobResult(ctx, id, options.output, options.format),
    );
}
