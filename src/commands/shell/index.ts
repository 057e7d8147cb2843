import type { Command } from 'commander';
import type { CommandContext } from '../context.js';

export function registerShell(program: Command, ctx: CommandContext): void {
  program
    .command('sql')
    .description(
      'an interactive SQL shell (statements end with ;; \\? for its commands); piped SQL runs like lake query -',
    )
    .option('--output <format>', 'table (default), vertical, csv, tsv, json, ndjson or markdown')
    .option('--continue-on-error', 'piped: run the statements after one fails (typed: always)')
    .option('--schema <schema>', 'resolve unqualified table names in this schema (default: LAKE_SCHEMA, the profile)')
    .action(async (options: { output?: string; continueOnError?: boolean; schema?: string }) =>
      (await import('./shell.js')).runShell(ctx, options),
    );
}
