import { tokenize } from './sql-tokenizer.js';

/**
 * The names (lower case) a statement may read tables or views by: every word and quoted identifier in its text.
 * Matched later against table and view names alone, so a column or alias that shares a table's name fetches that
 * table too: a fetch too many costs time, never an answer. Lake's own tokenizer, not a parse: it costs microseconds
 * where opening a DuckDB instance to parse costs twenty milliseconds. Undefined when it does not tokenize (every
 * table is read then; the guard will have said what is wrong).
 */
export function tableNamesIn(statement: string): Set<string> | undefined {
  try {
    return new Set(
      tokenize(statement)
        .filter((token) => token.kind === 'word' || token.kind === 'quoted_identifier')
        .map((token) => token.value.toLowerCase()),
    );
  } catch {
    return undefined;
  }
}
