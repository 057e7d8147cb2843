import { quoteLiteral } from './duckdb.js';
import { tokenize, type Token } from './sql-tokenizer.js';

/** DuckDB's own limit on the columns a PIVOT makes (its pivot_limit setting). */
export const PIVOT_VALUE_LIMIT = 100_000;

/** The text a PIVOT's values may hold in all: they become column names, and the text of the statement run. */
export const PIVOT_VALUE_BYTES = 8 * 2 ** 20;

/** Words that end a simplified PIVOT's ON list. */
const AFTER_ON: ReadonlySet<string> = new Set(['using', 'group', 'order', 'limit']);

/** A PIVOT statement whose ON list names a column without its IN (…) values. */
export interface DynamicPivot {
  /** One query per such column: its distinct non-NULL values as text, in the order DuckDB would make its columns. */
  valueQueries: string[];
  /** The statement with those values written in, a single SELECT that any engine session can run. */
  withValues(values: readonly (readonly string[])[]): string;
}

/**
 * DuckDB runs `PIVOT t ON col USING …` as two statements: one that creates an ENUM type of the column's values,
 * then the pivot. Lake runs one read-only statement per query, so it finds the values itself, with the same
 * query DuckDB would (distinct, as text, without NULL, sorted), and writes them in as `ON col IN (…)`. Undefined
 * for any other statement, a PIVOT whose every column has its values included.
 */
export function dynamicPivot(statement: string): DynamicPivot | undefined {
  let tokens: Token[];
  try {
    tokens = tokenize(statement);
  } catch {
    return undefined;
  }
  const first = tokens[0];
  if (first?.kind !== 'word' || (first.value !== 'pivot' && first.value !== 'pivot_wider')) return undefined;
  const entries: { start: number; end: number; hasValues: boolean }[] = [];
  let depth = 0;
  let onAt: number | undefined;
  let entryStart: number | undefined;
  let entryEnd = 0;
  let hasValues = false;
  const closeEntry = (end: number): void => {
    if (entryStart !== undefined) entries.push({ start: entryStart, end, hasValues });
    entryStart = undefined;
    hasValues = false;
  };
  for (const [i, token] of tokens.entries()) {
    const symbol = token.kind === 'symbol' ? token.value : undefined;
    const word = token.kind === 'word' ? token.value : undefined;
    if (symbol === '(') depth++;
    if (symbol === ')') depth--;
    const atTop = depth === 0 && symbol !== ')';
    if (onAt === undefined) {
      if (atTop && word === 'on') onAt = i;
      continue;
    }
    if (atTop && (token.kind === 'semicolon' || (word !== undefined && AFTER_ON.has(word)))) break;
    if (atTop && symbol === ',') {
      closeEntry((tokens[i - 1] as Token).end);
      continue;
    }
    if (atTop && word === 'in') hasValues = true;
    entryStart ??= token.start;
    entryEnd = token.end;
  }
  closeEntry(entryEnd);
  const open = entries.filter((entry) => !entry.hasValues);
  if (onAt === undefined || open.length === 0) return undefined;
  const dataset = statement.slice((tokens[1] as Token).start, (tokens[onAt] as Token).start).trim();
  return {
    valueQueries: open.map((entry) => {
      const column = statement.slice(entry.start, entry.end);
      return `SELECT DISTINCT CAST((${column}) AS VARCHAR) AS value FROM ${dataset} WHERE (${column}) IS NOT NULL ORDER BY ALL LIMIT ${PIVOT_VALUE_LIMIT + 1}`;
    }),
    withValues(values) {
      let written = '';
      let from = 0;
      for (const [n, entry] of open.entries()) {
        const list = (values[n] ?? []).map((value) => quoteLiteral(value)).join(', ');
        written += `${statement.slice(from, entry.end)} IN (${list})`;
        from = entry.end;
      }
      return written + statement.slice(from);
    },
  };
}
