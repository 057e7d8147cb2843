import type { Command, Option } from 'commander';
import type { CommandContext } from './context.js';
import { usageError } from './exit-codes.js';

/**
 * Shell completion: `lake completion bash|zsh|fish` prints a script that asks `lake __complete` for the candidates
 * of the word being completed. Commands and flags come from the program itself, so they are never out of date;
 * a few values are known (output formats, profiles, connectors); source, send and canvas names are asked of the
 * lake, with a short time limit, since a TAB must not hang.
 */
const SCRIPTS: Record<string, string> = {
  bash: `# lake completion for bash: add to ~/.bashrc:  source <(lake completion bash)
_lake_complete() {
  local IFS=$'\\n'
  COMPREPLY=( $(lake __complete -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) )
  # Names may hold blanks: each candidate is inserted as one word.
  COMPREPLY=( "\${COMPREPLY[@]// /\\\\ }" )
}
complete -o default -F _lake_complete lake
`,
  zsh: `#compdef lake
# lake completion for zsh: add to ~/.zshrc:  source <(lake completion zsh)
_lake_complete() {
  local -a candidates
  candidates=("\${(@f)$(lake __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -a candidates
}
compdef _lake_complete lake
`,
  fish: `# lake completion for fish: lake completion fish > ~/.config/fish/completions/lake.fish
complete -c lake -f -a '(lake __complete -- (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`,
};

/** Values a flag takes, where they are known without asking the lake. */
const FLAG_VALUES: Record<string, readonly string[]> = {
  '--output': ['table', 'csv', 'tsv', 'json', 'ndjson', 'markdown', 'vertical'],
  '--to': ['postgres', 'webhook'],
  '--format': ['json', 'ndjson'],
  '--mode': ['upsert', 'replace'],
  '--ssl-mode': ['disable', 'require', 'verify-full'],
  '--role': ['owner', 'admin', 'member'],
  '--kind': ['error', 'schema_change'],
};

/** Arguments that name a source, send or canvas, by the command they belong to. */
const NAMED_ARGUMENT: Record<string, 'sources' | 'sends' | 'canvases'> = {
  'sources get': 'sources',
  'sources update': 'sources',
  'sources pause': 'sources',
  'sources resume': 'sources',
  'sources test': 'sources',
  'sources delete': 'sources',
  'sync start': 'sources',
  'sync status': 'sources',
  'sends get': 'sends',
  'sends pause': 'sends',
  'sends resume': 'sends',
  'sends run': 'sends',
  'sends runs': 'sends',
  'sends delete': 'sends',
  'canvas get': 'canvases',
  'canvas add': 'canvases',
  'canvas delete': 'canvases',
};

/** A group's default subcommand (`lake query "…"` is `lake query run "…"`), whose flags the group takes too. */
const defaultOf = (command: Command): Command | undefined => {
  const name = (command as Command & { _defaultCommandName?: string | null })._defaultCommandName;
  return name ? command.commands.find((c) => c.name() === name) : undefined;
};

const optionsOf = (command: Command): readonly Option[] => {
  const all: Option[] = [...(defaultOf(command)?.options ?? [])];
  for (let c: Command | null = command; c; c = c.parent) all.push(...c.options);
  return all;
};

const takesValue = (option: Option | undefined): boolean =>
  option !== undefined && (option.required || option.optional);

function findOption(command: Command, flag: string): Option | undefined {
  return optionsOf(command).find((o) => o.long === flag || o.short === flag);
}

/** The candidates for the last word, given the words before it (without `lake`). */
async function candidates(ctx: CommandContext, program: Command, words: readonly string[]): Promise<string[]> {
  const current = words[words.length - 1] ?? '';
  let command = program;
  const path: string[] = [];
  for (let i = 0; i < words.length - 1; i++) {
    const word = words[i] as string;
    if (word.startsWith('-')) {
      if (!word.includes('=') && takesValue(findOption(command, word))) i++;
      continue;
    }
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (sub) {
      command = sub;
      path.push(sub.name());
    }
  }
  const previous = words[words.length - 2];
  const starts = (list: readonly string[]): string[] => list.filter((c) => c.startsWith(current));
  if (previous?.startsWith('-') && takesValue(findOption(command, previous))) {
    if (previous === '--profile') return starts(ctx.profiles().names());
    if (previous === '--connector') {
      const { CONNECTORS, refusalFor } = await import('../service/connectors/registry.js');
      return starts(CONNECTORS.filter((c) => refusalFor(c) === undefined).map((c) => c.name));
    }
    return starts(FLAG_VALUES[previous] ?? []);
  }
  if (current.startsWith('-'))
    return starts(
      optionsOf(command)
        .flatMap((o) => (o.hidden ? [] : [o.long ?? o.short ?? '']))
        .filter(Boolean),
    );
  const subcommands = command.commands
    .filter((c) => !(c as Command & { _hidden?: boolean })._hidden)
    .flatMap((c) => [c.name(), ...c.aliases()]);
  const kind = NAMED_ARGUMENT[path.join(' ')];
  return [...starts(subcommands), ...(kind ? starts(await namesOf(ctx, kind)) : [])];
}

/** The names of the caller's sources, sends or canvases; nothing if the lake does not answer within 1.5 s. */
async function namesOf(ctx: CommandContext, kind: 'sources' | 'sends' | 'canvases'): Promise<string[]> {
  const lookup = (async () => {
    const { CANVAS_ROUTES, SEND_ROUTES, SOURCE_ROUTES } = await import('../contract/routes.js');
    const route =
      kind === 'sources'
        ? SOURCE_ROUTES.listSources
        : kind === 'sends'
          ? SEND_ROUTES.listSends
          : CANVAS_ROUTES.listCanvases;
    const page = (await (await ctx.client()).call(route, { query: { limit: 100 } })).body as {
      data: { name: string }[];
    };
    return page.data.map((item) => item.name);
  })().catch(() => [] as string[]);
  const timeout = new Promise<string[]>((resolve) => setTimeout(() => resolve([]), 1500).unref());
  return Promise.race([lookup, timeout]);
}

export function registerCompletion(program: Command, ctx: CommandContext): void {
  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish)')
    .argument('<shell>', 'bash, zsh or fish')
    .action((shell: string) => {
      const script = SCRIPTS[shell];
      if (!script)
        throw usageError(
          `lake completes in bash, zsh and fish, not '${shell}'.`,
          'Run lake completion bash (or zsh, fish).',
        );
      ctx.io.stdout.write(script);
    });
  program
    .command('__complete', { hidden: true })
    .description('the candidates for the word being completed (used by the completion scripts)')
    .argument('[words...]')
    .allowUnknownOption()
    .helpOption(false)
    .action(async (words: string[]) => {
      for (const candidate of await candidates(ctx, program, words.length === 0 ? [''] : words))
        ctx.io.stdout.write(`${candidate}\n`);
    });
}
