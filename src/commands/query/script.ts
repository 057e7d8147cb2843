import { SqlTokenizeError, tokenize } from '../../service/engine/sql-tokenizer.js';

/** One statement of a script, and where it starts in it. */
export interface ScriptStatement {
  sql: string;
  /** The 1-based line of the script its first token is on. */
  line: number;
}

/**
 * Splits a script into its statements at the semicolons the tokenizer sees: never inside a string, a dollar-quoted
 * body, a quoted name or a comment. Comments between statements and empty statements (`;;`) are dropped. Text the
 * tokenizer cannot read (an unterminated string) is one statement, for the service to refuse with its reason.
 */
export function splitScript(text: string): ScriptStatement[] {
  let tokens;
  try {
    tokens = tokenize(text);
  } catch (error) {
    if (!(error instanceof SqlTokenizeError)) throw error;
    return text.trim() === '' ? [] : [{ sql: text.trim(), line: lineAt(text, text.search(/\S/)) }];
  }
  const statements: ScriptStatement[] = [];
  let first: number | undefined;
  let last = 0;
  for (const token of tokens) {
    if (token.kind === 'semicolon') {
      if (first !== undefined) statements.push({ sql: text.slice(first, last), line: lineAt(text, first) });
      first = undefined;
      continue;
    }
    first ??= token.start;
    last = token.end;
  }
  if (first !== undefined) statements.push({ sql: text.slice(first, last), line: lineAt(text, first) });
  return statements;
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * DuckDB's `LINE n:` excerpt of a statement's error, renumbered to count in the whole script (the statement began
 * on line `line`), with its caret moved under the same character when the number grows a digit.
 */
export function inScriptLines(message: string, line: number): string {
  return message.replace(/^LINE (\d+): (.*)\n( *)\^/m, (_whole, n: string, text: string, pad: string) => {
    const renumbered = String(Number(n) + line - 1);
    const caretPad = ' '.repeat(Math.max(0, pad.length + renumbered.length - n.length));
    return `LINE ${renumbered}: ${text}\n${caretPad}^`;
  });
}
