import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Interface } from 'node:readline';
import { resolveConfigDir } from '../../config/paths.js';
import { makePrivateFolder } from '../../support/private-folder.js';
import { printError } from '../errors.js';
import { isOutputFormat } from '../../render/rows.js';
import type { CommandContext } from '../context.js';
import { querySchema, rowOutput, runQuery } from '../query/run.js';
import { SqlCompleter } from './completion.js';
import { splitScript } from '../query/script.js';
import { runMetaCommand, type ShellSession } from './meta-commands.js';
import { executeStatement, type ShellState, type TerminalHandover } from './shell-query.js';
import { isComplete } from './statement.js';

const PROMPT = 'lake> ';
const CONTINUE = '   -> ';
const HISTORY_SIZE = 1000;

/** Where the shell keeps its history: the local lake's home, or beside the profiles for a remote service. */
function historyFile(ctx: CommandContext, home: string | undefined): string {
  return home ? join(home, 'sql_history') : join(resolveConfigDir(ctx.env), 'sql_history');
}

function loadHistory(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).reverse().slice(0, HISTORY_SIZE);
  } catch {
    // No history yet (the first session) or an unreadable file: the shell starts without one.
    return [];
  }
}

function saveHistory(file: string, history: readonly string[]): void {
  try {
    // Not Node's recursive mkdir, which never returns under /proc (a LAKE_CONFIG_DIR there).
    makePrivateFolder(dirname(file), 'LAKE_CONFIG_DIR');
    writeFileSync(file, `${[...history].slice(0, HISTORY_SIZE).reverse().join('\n')}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  } catch {
    // A history that cannot be kept does not stop the session.
  }
}

/**
 * `lake sql`: an interactive SQL shell over the same API as every command (local lake or lake serve). Piped input
 * runs as `lake query -` does.
 */
export async function runShell(
  ctx: CommandContext,
  options: { output?: string; continueOnError?: boolean; schema?: string },
): Promise<void> {
  if ((ctx.io.stdin as { isTTY?: boolean }).isTTY !== true)
    return runQuery(ctx, '-', {
      output: options.output,
      continueOnError: options.continueOnError,
      ...(options.schema !== undefined ? { schema: options.schema } : {}),
    });
  const schema = querySchema(ctx, options.schema);
  const client = await ctx.client();
  const settings = await ctx.settings();
  const state: ShellState = {
    format:
      options.output && isOutputFormat(options.output)
        ? options.output
        : rowOutput(ctx, { output: options.output }).format,
    timing: false,
    parameters: new Map(),
    ...(schema !== undefined ? { schema } : {}),
  };
  const file = historyFile(ctx, settings.homeDir.value);
  const completer = new SqlCompleter(client);
  let buffer = '';
  const readline = await import('node:readline');
  const rl = readline.createInterface({
    input: ctx.io.stdin,
    output: ctx.io.stdout as NodeJS.WritableStream,
    terminal: true,
    history: loadHistory(file),
    historySize: HISTORY_SIZE,
    removeHistoryDuplicates: true,
    completer: (line: string, callback: (error: Error | null, result: [string[], string]) => void) => {
      // The lines already typed of this statement name its tables and aliases too.
      completer.complete(line, buffer === '' ? line : `${buffer}\n${line}`).then(
        (result) => callback(null, result),
        () => callback(null, [[], line]),
      );
    },
  });
  const target =
    ctx.mode === 'local' ? `the local lake at ${settings.homeDir.value}` : `lake serve at ${settings.baseUrl.value}`;
  ctx.io.stdout.write(`lake ${target}. Statements end with ;, \\? for help, \\q to quit.\n`);
  let interrupts = 0;
  rl.setPrompt(PROMPT);
  rl.prompt();
  const done = new Promise<void>((resolve) => rl.on('close', resolve));
  const terminal = lendTerminal(ctx, rl);
  const session: ShellSession = {
    ctx,
    client,
    state,
    target,
    terminal,
    async runSql(sql) {
      // Several statements run one after another, as psql runs them; a failure does not stop the rest.
      for (const statement of splitScript(sql)) {
        await executeStatement(ctx, client, state, terminal, statement.sql).catch((error: unknown) =>
          printError(ctx.io, error, false),
        );
        if (state.interrupted) break;
      }
      state.interrupted = false;
    },
    continueWith(text) {
      buffer = text;
    },
  };
  rl.on('SIGINT', () => {
    if (state.running) {
      state.interrupted = true;
      state.running.stop.abort();
      return;
    }
    if (buffer !== '' || rl.line !== '') {
      buffer = '';
      interrupts = 0;
      ctx.io.stdout.write('^C\n');
      rl.setPrompt(PROMPT);
      (rl as Interface & { line: string }).line = '';
      rl.prompt();
      return;
    }
    interrupts += 1;
    if (interrupts >= 2) return rl.close();
    ctx.io.stdout.write('\n(^C again, ^D or \\q to quit)\n');
    rl.prompt();
  });
  const promptAgain = (): void => {
    rl.setPrompt(buffer === '' ? PROMPT : CONTINUE);
    rl.prompt();
  };
  // Input stays live while a statement runs, so ^C reaches the SIGINT handler; lines typed meanwhile are dropped.
  let busy = false;
  rl.on('line', (line) => {
    interrupts = 0;
    if (busy) return;
    void (async () => {
      const trimmed = line.trim();
      if (
        buffer === '' &&
        (trimmed.startsWith('\\') || trimmed === 'help' || trimmed === 'exit' || trimmed === 'quit')
      ) {
        busy = true;
        const quit = await runMetaCommand(session, trimmed).catch(
          (error: unknown) => (printError(ctx.io, error, false), false),
        );
        busy = false;
        if (quit) return rl.close();
        return promptAgain();
      }
      buffer = buffer === '' ? line : `${buffer}\n${line}`;
      if (buffer.trim() === '' || !isComplete(buffer)) {
        if (buffer.trim() === '') buffer = '';
        return promptAgain();
      }
      const sql = buffer;
      buffer = '';
      busy = true;
      keepAsOneEntry(rl, sql);
      await session.runSql(sql);
      busy = false;
      promptAgain();
    })();
  });
  await done;
  if (state.output) state.output.stream.end();
  ctx.io.stdout.write('\n');
  saveHistory(file, (rl as Interface & { history: string[] }).history ?? []);
}

/**
 * Lends the terminal to a program that needs it whole (the pager, the editor): the line editor stops reading and
 * leaves raw mode meanwhile. A ^C typed there reaches this process as a signal too; it belongs to that program.
 */
function lendTerminal(ctx: CommandContext, rl: Interface): TerminalHandover {
  const stdin = ctx.io.stdin as { setRawMode?: (raw: boolean) => void };
  return {
    async whileAway(use) {
      const ignore = (): void => {};
      process.on('SIGINT', ignore);
      rl.pause();
      stdin.setRawMode?.(false);
      try {
        return await use();
      } finally {
        stdin.setRawMode?.(true);
        rl.resume();
        process.off('SIGINT', ignore);
      }
    },
  };
}

/**
 * A statement typed over several lines is one history entry (as psql keeps it), not one per line: readline has
 * added each line; they are replaced by the whole statement on one line.
 */
function keepAsOneEntry(rl: Interface, sql: string): void {
  // Readline keeps no blank line, so only the lines with text were added.
  const lines = sql.split('\n').filter((line) => line.trim() !== '').length;
  if (lines < 2) return;
  const history = (rl as Interface & { history: string[] }).history;
  history.splice(0, lines, sql.replace(/\s*\n\s*/g, ' '));
}
