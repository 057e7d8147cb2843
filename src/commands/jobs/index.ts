import { pageOptions, type PageOptions } from '../listing.js';
import type { Command } from 'commander';
import type { CommandContext } from '../context.js';

// Each verb's code is loaded when it runs.
export function registerJobs(program: Command, ctx: CommandContext): void {
  const jobs = program
    .command('jobs')
    .description('the durable record of asynchronous work: list, follow, cancel, collect');

  pageOptions(jobs.command('ls').description('list jobs, newest first')).action(async (options: PageOptions) =>
    (await import('./verbs.js')).listJobs(ctx, options),
  );

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
    .description("download a succeeded query job's Parquet result (freshly signed, resumable)")
    .argument('<id>', 'job id')
    .option('-o, --output <file>', 'where to write (default <id>.parquet; - for stdout)')
    .action(async (id: string, options: { output?: string }) =>
      (await import('./verbs.js')).jobResult(ctx, id, options.output),
    );
}
