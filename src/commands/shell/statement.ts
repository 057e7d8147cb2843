import { tokenize } from '../../service/engine/sql-tokenizer.js';

/**
 * Whether the text typed so far is a whole statement: it ends with a `;` that is not inside a string, a quoted
 * name or a comment. An unterminated string or comment means more lines are coming.
 */
export function isComplete(text: string): boolean {
  try {
    const tokens = tokenize(text);
    return tokens.length > 0 && tokens[tokens.length - 1]?.kind === 'semicolon';
  } catch {
    // An unterminated string or comment: more lines are coming.
    return false;
  }
}
