import type { DuckDBConnection } from '@duckdb/node-api';
import { tableReferences } from '../engine/table-refs.js';

/**
 * The names (lower case) a statement reads tables or views by, from DuckDB's parse tree, matched later by name
 * alone: a schema it leaves out is resolved only at bind time, and fetching a table too many costs time, never an
 * answer. Undefined when it does not parse here: then every table is read (the engine will say what is wrong).
 */
export async function tableNamesIn(connection: DuckDBConnection, statement: string): Promise<Set<string> | undefined> {
  try {
    const { references, cteNames } = await tableReferences(connection, statement);
    const ctes = new Set([...cteNames].map((name) => name.toLowerCase()));
    return new Set(references.map((ref) => ref.table.toLowerCase()).filter((name) => !ctes.has(name)));
  } catch {
    return undefined;
  }
}
