import { tokenize } from './sql-tokenizer.js';

/** Statements DuckDB binds as a SELECT over its SHOW_REF, which a COPY's subquery cannot hold as written. */
const SHOW_FORMS: ReadonlySet<string> = new Set(['describe', 'desc', 'show', 'summarize']);

/**
 * The statement as a query a COPY (…) can hold: DESCRIBE, SHOW and SUMMARIZE are wrapped as `FROM (…)`, which
 * DuckDB reads as the same rows; any other SELECT is left exactly as written (a wrapper could lose its ORDER BY).
 */
export function asCopySource(statement: string): string {
  const first = tokenize(statement)[0];
  return first?.kind === 'word' && SHOW_FORMS.has(first.value) ? `FROM (${statement}\n)` : statement;
}

/**
 * SHOW TABLES as lake means it: DuckDB lists the current schema's tables, and a lake session's current schema
 * (lake.main) holds none; lake lists every table and view of the session's catalog, with its schema. The session's
 * catalog is the caller's own (cut down to its grants), so the list is too. Any other statement is returned as is.
 */
export function withLakeMeaning(statement: string): string {
  const words = tokenize(statement).filter((t) => t.kind !== 'semicolon');
  const [show, tables] = words;
  if (words.length !== 2 || show?.value !== 'show' || tables?.value !== 'tables' || tables.kind !== 'word')
    return statement;
  return "SELECT schema, name FROM (SHOW ALL TABLES) WHERE database = 'lake' ORDER BY schema, name";
}
