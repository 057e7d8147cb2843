import type { Command } from 'commander';
import { ENVIRONMENT_VARIABLES } from '../config/environment.js';
import { printJson } from '../render/record.js';
import type { CommandContext } from './context.js';
import { usageError } from './exit-codes.js';
import { packageVersion } from '../support/version.js';

/** `lake help environment`: every LAKE_* variable, what it does and its default. */
function printEnvironment(ctx: CommandContext): void {
  if (ctx.json) return printJson(ctx.io, { object: 'list', data: ENVIRONMENT_VARIABLES });
  const width = Math.max(...ENVIRONMENT_VARIABLES.map((v) => v.name.length));
  const lines = ENVIRONMENT_VARIABLES.map(
    (v) =>
      `  ${v.name.padEnd(width)}  ${v.meaning} (default: ${v.default})${v.scope === 'serve' ? ' [lake serve]' : ''}`,
  );
  ctx.io.stdout.write(`Environment variables (flags win over them; they win over a profile):\n\n${lines.join('\n')}\n`);
}

/**
 * `lake help [command…]` and `lake help environment`, in place of commander's implicit help command, which answered
 * `help environment` with the top-level help and exit 2; and `lake version`.
 */
export function registerHelp(program: Command, ctx: CommandContext): void {
  program.helpCommand(false);
  program
    .command('help')
    .description(
      'help for a command (lake help sync start), the environment variables (lake help environment), or an error code (lake help errors CODE)',
    )
    .argument('[topic...]', 'a command, environment, or errors [code]')
    .action(async (topic: string[]) => {
      if (topic.length === 1 && topic[0] === 'environment') return printEnvironment(ctx);
      if (topic[0] === 'errors' && topic.length <= 2)
        return (await import('./error-help.js')).printErrorHelp(ctx, topic[1]);
      let command: Command = program;
      for (const name of topic) {
        const next = command.commands.find((c) => c.name() === name || c.aliases().includes(name));
        if (!next)
          throw usageError(
            `There is no command '${topic.join(' ')}'.`,
            'Run `lake help` for the commands, or `lake help environment` for the settings variables.',
          );
        command = next;
      }
      ctx.io.stdout.write(command.helpInformation());
    });
  program
    .command('version')
    .description('print the version of lake')
    .action(() => {
      if (ctx.json)
        return printJson(ctx.io, { object: 'version', version: packageVersion(), node: process.versions.node });
      ctx.io.stdout.write(`lake ${packageVersion()} (node ${process.versions.node})\n`);
    });
}
