import { mark } from './support/debug-timing.js';
import * as Commander from 'commander';
import { registerAdmin } from './commands/admin/index.js';
import { registerAuth } from './commands/auth/index.js';
import { registerCatalog } from './commands/catalog/index.js';
import { registerCanvas } from './commands/canvas/index.js';
import { registerConfig } from './commands/config/index.js';
import { CommandContext, type GlobalOptions } from './commands/context.js';
import { asCliError, CliError, EXIT, exitCodeFor } from './commands/exit-codes.js';
import { registerCompletion } from './commands/completion.js';
import { addExamples } from './commands/examples.js';
import { registerHelp } from './commands/help.js';
import { registerInit } from './commands/init.js';
import { registerJobs } from './commands/jobs/index.js';
import { registerLogs } from './commands/logs/index.js';
import { registerSends } from './commands/sends/index.js';
import { registerPats } from './commands/pats/index.js';
import { registerQuery } from './commands/query/index.js';
import { registerUsage } from './commands/usage/index.js';
import { registerServe } from './commands/serve.js';
import { registerShell } from './commands/shell/index.js';
import { registerSources } from './commands/sources/index.js';
import { registerSync } from './commands/sync/index.js';
import { registerWhoami } from './commands/whoami.js';
import { prepareColors } from './render/colors.js';
import { printError } from './commands/errors.js';
import { IOStreams } from './render/iostreams.js';
import { packageVersion } from './support/version.js';

// Bundled (not required at run time): inside the bundle it is part of the code cache, where a require cost ~12 ms.
const { Command, CommanderError } = Commander;

export function buildProgram(ctx: CommandContext, commanderErr?: (text: string) => void): Commander.Command {
  const program = new Command('lake');
  program
    .description('Query, catalogue and sync a data lake, locally or against a lake service.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option('--home <dir>', 'local lake home (env LAKE_HOME; default ~/.local/share/lake)')
    .option('--base-url <url>', 'use the lake service at this URL instead of the local lake (env LAKE_BASE_URL)')
    .option('--token <token>', 'credential for the service (env LAKE_TOKEN)')
    .option('--profile <name>', 'settings profile (env LAKE_PROFILE)')
    .option('--json', 'print JSON instead of tables and text')
    .option('--no-color', 'never print colour (also NO_COLOR)')
    .option('--no-pager', 'never page long output on a terminal (also LAKE_PAGER=cat)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: true })
    .configureOutput({
      writeOut: (text) => ctx.io.stdout.write(text),
      // A usage problem is said by main, as every error is (code, message, hint), not as commander's text; a group's
      // help asked by naming the group alone goes to stdout from there.
      writeErr: (text) => (commanderErr ? commanderErr(text) : void ctx.io.stderr.write(text)),
    })
    .exitOverride()
    .hook('preAction', (_program, action) => {
      ctx.globals = action.optsWithGlobals<GlobalOptions>();
      if (ctx.globals.color === false) ctx.io.disableColor();
    });

  registerWhoami(program, ctx);
  registerInit(program, ctx);
  registerQuery(program, ctx);
  registerShell(program, ctx);
  registerCatalog(program, ctx);
  registerJobs(program, ctx);
  registerSources(program, ctx);
  registerSync(program, ctx);
  registerPats(program, ctx);
  registerCanvas(program, ctx);
  registerLogs(program, ctx);
  registerSends(program, ctx);
  registerUsage(program, ctx);
  registerServe(program, ctx);
  registerAdmin(program, ctx);
  registerConfig(program, ctx);
  registerAuth(program, ctx);
  registerHelp(program, ctx);
  registerCompletion(program, ctx);
  addExamples(program);
  answerListAsLs(program);
  return program;
}

/**
 * Every `ls` also answers to `list`, as docker's and kubectl's listings do: the one spelling people type first
 * should not be a usage error in one command group and work in another.
 */
function answerListAsLs(command: Commander.Command): void {
  for (const sub of command.commands) {
    if (sub.name() === 'ls' && !command.commands.some((other) => other.name() === 'list')) sub.alias('list');
    answerListAsLs(sub);
  }
}

/** Runs one command line and returns the exit code; never throws. */
export async function main(
  argv: readonly string[],
  io: IOStreams = IOStreams.system(),
  env: Record<string, string | undefined> = process.env,
  options: { ownsProcess?: boolean } = {},
): Promise<number> {
  mark('bundle loaded');
  const ctx = new CommandContext(io, env);
  ctx.ownsProcess = options.ownsProcess === true;
  ctx.jsonRequested = argv.includes('--json');
  let commanderText = '';
  const program = buildProgram(ctx, (text) => (commanderText += text));
  try {
    await prepareColors(io);
    // `lake` alone is asking what lake can do: the help, on stdout, and success (as gh and bq answer).
    if (argv.length <= 2) {
      io.stdout.write(program.helpInformation());
      return EXIT.ok;
    }
    await program.parseAsync([...argv]);
    return ctx.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has already printed help (asked for) or the version.
      if (error.exitCode === 0) return EXIT.ok;
      // A group named alone (`lake sources`): its help, on stdout and as success, as `lake` alone answers.
      if (error.code === 'commander.help') {
        io.stdout.write(commanderText);
        return EXIT.ok;
      }
      const usage = usageMistake(error.message);
      printError(io, usage, ctx.jsonRequested, EXIT.usage);
      return EXIT.usage;
    }
    const known = asCliError(error);
    printError(io, known, ctx.json || ctx.jsonRequested, exitCodeFor(known));
    return exitCodeFor(known);
  } finally {
    await ctx.close();
    mark('closed');
  }
}
/** Commander's `error: unknown command 'quer'\n(Did you mean query?)` as a usage error with what to do. */
function usageMistake(message: string): CliError {
  const [first = '', ...rest] = message.replace(/^error: /, '').split('\n');
  const suggestion = rest.map((line) => line.replace(/^\((.*)\)$/, '$1').trim()).filter(Boolean);
  return new CliError(
    'usage',
    first,
    EXIT.usage,
    [...suggestion, 'Run the command with --help for its usage.'].join(' '),
  );
}

// For the build's warm-up run (scripts/bundle.mjs), which makes the code cache with output going nowhere.
export { IOStreams };
