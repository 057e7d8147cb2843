import { randomBytes } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { LakeServiceError } from '../core/errors.js';
import { quoteLiteral } from './duckdb.js';
import { parseTree, stringifyTree } from './sql-tree.js';

/** A table a statement reads as of a snapshot or a time: DuckDB's `AT (VERSION => n)` / `AT (TIMESTAMP => t)`. */
export interface AsOfReference {
  schema: string;
  table: string;
  /** The snapshot id (VERSION), or the time (TIMESTAMP) as epoch milliseconds. */
  at: { version: number } | { time: number };
}

type Node = Record<string, unknown>;

/** A table read AT a version or time that cannot be: the query fails with this message, as DuckDB's would. */
export class AsOfError extends Error {}

/**
 * What an AT clause may compute: constants, casts, arithmetic and the current time (`now() - INTERVAL 1 HOUR`).
 * It is evaluated by lake itself, so nothing else (no table, no file, no other function) may appear in it.
 */
const AT_FUNCTIONS = new Set([
  '+',
  '-',
  'now',
  'current_timestamp',
  'get_current_timestamp',
  'today',
  'current_date',
  'trunc',
  'to_seconds',
  'to_minutes',
  'to_hours',
  'to_days',
  'to_weeks',
  'to_months',
  'to_years',
  'to_milliseconds',
  'to_microseconds',
]);

function assertPlain(expression: unknown): void {
  const node = expression as Node;
  const kind = node.class;
  if (kind === 'CONSTANT') return;
  if (kind === 'CAST') return assertPlain(node.child);
  if (kind === 'FUNCTION' && AT_FUNCTIONS.has(String(node.function_name).toLowerCase())) {
    for (const child of (node.children as unknown[]) ?? []) assertPlain(child);
    return;
  }
  throw new LakeServiceError(
    'forbidden_function',
    'An AT clause takes a snapshot id or a time: a constant, or now() with an interval (AT (TIMESTAMP => now() - INTERVAL 1 HOUR)).',
    { param: 'sql' },
  );
}

interface Parsed {
  tree: { statements: Node[] };
  marker: string;
}

const parse = async (
  connection: DuckDBConnection,
  sql: string,
  marker = `lake-big-${randomBytes(6).toString('hex')}:`,
): Promise<Parsed> => {
  const reader = await connection.runAndReadAll(`SELECT json_serialize_sql(${quoteLiteral(sql)}) AS tree`);
  return { tree: parseTree(String(reader.getRows()[0]?.[0]), marker) as Parsed['tree'], marker };
};

const unparse = async (connection: DuckDBConnection, parsed: Parsed): Promise<string> =>
  String(
    (
      await connection.runAndReadAll(
        `SELECT json_deserialize_sql(${quoteLiteral(stringifyTree(parsed.tree, parsed.marker))}) AS sql`,
      )
    ).getRows()[0]?.[0],
  );

/** Every BASE_TABLE node of a parse tree that has an AT clause. */
function nodesWithAt(tree: unknown): Node[] {
  const found: Node[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    const record = node as Node;
    if (record.type === 'BASE_TABLE' && record.at_clause) found.push(record);
    Object.values(record).forEach(walk);
  };
  walk(tree);
  return found;
}

/**
 * Names each unnamed column whose expression reads a table AT a version or time as the statement names it (DuckDB
 * names such a column by the expression's text): the rewrite reads a relation named `orders@42` instead, and the
 * column would otherwise be named after that. One round trip for all of them, each told apart by a marker alias.
 */
async function nameAsWritten(connection: DuckDBConnection, parsed: Parsed, atNodes: ReadonlySet<Node>): Promise<void> {
  const unnamed: Node[] = [];
  const readsAt = (node: unknown): boolean =>
    Array.isArray(node)
      ? node.some(readsAt)
      : node !== null && typeof node === 'object' && (atNodes.has(node as Node) || Object.values(node).some(readsAt));
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    const record = node as Node;
    if (record.type === 'SELECT_NODE' && Array.isArray(record.select_list))
      for (const expression of record.select_list as Node[])
        if (expression.alias === '' && expression.class !== 'STAR' && readsAt(expression)) unnamed.push(expression);
    Object.values(record).forEach(walk);
  };
  walk(parsed.tree);
  if (unnamed.length === 0) return;
  const marker = `lake_name_${randomBytes(6).toString('hex')}_`;
  const probe = await parse(connection, 'SELECT 1', parsed.marker);
  (probe.tree.statements[0] as { node: { select_list: unknown[] } }).node.select_list = unnamed.map((e, i) => ({
    ...e,
    alias: `${marker}${i}`,
  }));
  const text = (await unparse(connection, probe)).replace(/^SELECT /i, '').replace(/;\s*$/, '');
  const parts = text.split(new RegExp(` AS "?${marker}(\\d+)"?(?:, |$)`));
  for (const [i, expression] of unnamed.entries()) {
    const written = parts[i * 2];
    if (written !== undefined && parts[i * 2 + 1] === String(i)) expression.alias = written;
  }
}

/** Whether a statement may hold an AT clause at all: most do not, and need no parse for it. */
export const mayHoldAsOf = (statement: string): boolean => /\bAT\s*\(/i.test(statement);

/**
 * The tables a statement reads AT a version or time, with their AT clauses evaluated (a time as DuckDB computes
 * it, under the checks of assertPlain), and `rewrite`, which gives the statement with each of them reading the
 * relation `name(ref, snapshot)` instead (lake's catalog for the query holds a view of that name per version).
 */
export async function findAsOf(
  connection: DuckDBConnection,
  statement: string,
  /** The query's default schema: where a table named without one is (POST /queries `schema`). */
  defaultSchema?: string,
): Promise<{
  references: AsOfReference[];
  rewrite: (name: (ref: AsOfReference, index: number) => { schema: string; table: string }) => Promise<string>;
}> {
  const parsed = await parse(connection, statement);
  const nodes = nodesWithAt(parsed.tree);
  const references: AsOfReference[] = [];
  for (const node of nodes) {
    const catalog = String(node.catalog_name ?? '');
    const schema = String(node.schema_name ?? '') || (catalog === '' ? (defaultSchema ?? '') : '');
    if ((catalog !== '' && catalog.toLowerCase() !== 'lake') || schema === '')
      throw new AsOfError(
        `Name a table read AT a version or time as <schema>.<table> or lake.<schema>.<table>, not '${String(node.table_name).slice(0, 200)}'.`,
      );
    const clause = node.at_clause as { unit: string; expr: unknown };
    assertPlain(clause.expr);
    // The expression alone, as a SELECT of its own: DuckDB writes it back as SQL and computes it.
    const probe = await parse(connection, 'SELECT 1', parsed.marker);
    (probe.tree.statements[0] as { node: { select_list: unknown[] } }).node.select_list[0] = clause.expr;
    const expression = (await unparse(connection, probe)).replace(/;\s*$/, '');
    const unit = clause.unit.toUpperCase();
    const computed = expression.replace(/^SELECT /i, '');
    const name = `${schema}.${String(node.table_name).slice(0, 200)}`;
    const notA = unit === 'VERSION' ? 'snapshot id' : 'time';
    // A value DuckDB cannot take as a version or a time ('seven', 1e30) fails the query with DuckDB's reason (its
    // first line: the rest shows the statement lake computed the clause with, not the caller's).
    const row = await connection
      .runAndReadAll(
        unit === 'VERSION'
          ? `SELECT CAST((${computed}) AS BIGINT) AS v, CAST((${computed}) AS DOUBLE) AS exact`
          : `SELECT epoch_ms(CAST((${computed}) AS TIMESTAMPTZ)) AS v`,
      )
      .then(
        (reader) => reader.getRowObjectsJS()[0],
        (error: unknown) => {
          const reason = error instanceof Error ? (error.message.split('\n')[0] ?? '').slice(0, 300) : String(error);
          throw new AsOfError(`The AT clause of ${name} is no ${notA}: ${reason}`);
        },
      );
    const value = row?.v;
    if (value === null || value === undefined) throw new AsOfError(`The AT clause of ${name} is NULL.`);
    // A snapshot id is a whole number: 3.5 is none (a cast to BIGINT would round it to another snapshot).
    if (unit === 'VERSION' && Number(value) !== Number(row?.exact))
      throw new AsOfError(`The AT clause of ${name} is no ${notA}: ${String(row?.exact)} is not a whole number.`);
    references.push({
      schema,
      table: String(node.table_name),
      at: unit === 'VERSION' ? { version: Number(value) } : { time: Number(value) },
    });
  }
  return {
    references,
    rewrite: async (name) => {
      await nameAsWritten(connection, parsed, new Set(nodes));
      for (const [index, node] of nodes.entries()) {
        const target = name(references[index] as AsOfReference, index);
        // Without an alias of its own, the table keeps binding under its name (`orders.status`), not lake's.
        if (!node.alias) node.alias = node.table_name;
        node.catalog_name = 'lake';
        node.schema_name = target.schema;
        node.table_name = target.table;
        node.at_clause = null;
      }
      return (await unparse(connection, parsed)).replace(/;\s*$/, '');
    },
  };
}

/**
 * DuckDB's message about a statement lake rewrote to read tables AT versions, as about the statement sent: a
 * relation of the rewrite (`lake.shop."items@42"`) named as the statement names it (`shop.items AT (VERSION =>
 * 42)`), and without the line of context DuckDB quotes, which shows the rewritten statement, not the caller's.
 */
export function messageAsWritten(message: string): string {
  return message
    .replace(/\n\s*LINE \d+:[\s\S]*$/, '')
    .replace(
      /(?:lake\.)?(?:("?)([^".\s]+)\1\.)?"([^"]+)@(\d+)"/g,
      (_all, _q: string, schema: string | undefined, table: string, n: string) =>
        `${schema ? `${schema}.` : ''}${table} AT (VERSION => ${n})`,
    )
    .trim();
}
