import type { Command } from 'commander';
import { printFields, printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { openAdminHome } from './open-home.js';

const megabytes = (bytes: number): string =>
  `${(bytes / 1e6).toLocaleString('en-US', { maximumFractionDigits: 1 })} MB`;

export function registerAdminGc(admin: Command, ctx: CommandContext): void {
  admin
    .command('gc')
    .description(
      'remove what the lake no longer needs on disk: old snapshots past their retention, unused catalogs, leftovers of killed syncs',
    )
    .action(async () => {
      const { services } = await openAdminHome(ctx);
      const report = await services.collector.collect();
      if (ctx.json) return printJson(ctx.io, report);
      printFields(ctx.io, [
        ['freed', megabytes(report.bytes_freed)],
        ['snapshots', String(report.snapshots)],
        ['orphaned folders', String(report.orphaned_folders)],
        ['catalog files', String(report.catalog_files)],
        ['staging folders', String(report.staging_folders)],
      ]);
    });
}
