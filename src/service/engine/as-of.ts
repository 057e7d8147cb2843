import { randomBytes } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { LakeServiceError } from '../core/errors.js';
import { quoteIdentifier, quoteLiteral } from './duckdb.js';
import { dynamicPivot } from './pivot.js';
import { tokenize, type Token } from './sql-tokenizer.js';
import { parseTree, stringifyTree } from './sql-tree.js';

/** A table a statement reads as of a snapshot or a time: DuckDB's `AT (VERSION => n)` / `AT (TIMESTAMP => t)`. */
export interface AsOfReference {
  schema: string;
  table: string;
  /** The snapshot id (VERSION), or the time (TIMESTAMP) as epoch milliseconds. */
  at: { version: number } | { time: number };
}

type Node = Record<string, unknown>;

/**
 * The name of a table's version in a query's catalog: lake rewrites `AT` to read it (decision 48). Its separator is
 * DEL (U+007F), which no lake table or view can hold (safeLakeName, checkObjectName), so it never names a table of
 * its own: with `@`, a table called `orders@42` and version 42 of `orders` were one relation, and one was read
 * for the other.
 */
const VERSION_SEPARATOR = '\u007f';
export const versionName = (table: string, snapshot: number): string => `${table}${VERSION_SEPARATOR}${snapshot}`;

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
 * names such a column by the expression's text): the rewrite reads lake's relation for the version instead (versionName),
 * and the column would otherwise be named after that. One round trip for all of them, each told apart by a marker alias.
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

/**
 * Column references qualified by the schema of a table read AT a version (`demo.orders.status`,
 * `lake.demo.orders.status`) written as `orders.status`: the rewrite binds that table under its name alone, as an
 * alias, and DuckDB binds no schema to an alias. A scope binds a table's name once (DuckDB refuses two `orders`
 * without aliases), so the shorter name reads the same table.
 */
function unqualifyColumns(tree: unknown, boundByName: readonly AsOfReference[]): void {
  if (boundByName.length === 0) return;
  const same = (a: unknown, b: string): boolean => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    const record = node as Node;
    const names = record.class === 'COLUMN_REF' ? record.column_names : undefined;
    if (Array.isArray(names) && names.length >= 3) {
      // `lake.demo.orders.status`, else `demo.orders.status` (`demo.orders.address.city` is a struct's field).
      const start = [names.length >= 4 && same(names[0], 'lake') ? 1 : undefined, 0].find(
        (at) =>
          at !== undefined && boundByName.some((ref) => same(names[at], ref.schema) && same(names[at + 1], ref.table)),
      );
      if (start !== undefined) record.column_names = names.slice(start + 1);
    }
    Object.values(record).forEach(walk);
  };
  walk(tree);
}

/**
 * The statement with each table read AT a version replaced, in its text, by lake's relation for that version under
 * the table's name or alias (`demo.orders o AT (VERSION => 2)` → `lake.demo."orders␡2" AS o`): for a statement whose
 * parse tree DuckDB cannot write back (a PIVOT lake finds the values of). Each reference is found at the place the
 * tree gives (a byte offset) and must read there as `name [[AS] alias] AT (…)`; else the query fails saying so.
 */
function rewriteInText(
  statement: string,
  parsedText: string,
  rewrites: { node: Node; target: { schema: string; table: string } }[],
): string {
  const bytes = Buffer.from(parsedText);
  const spans = rewrites.map(({ node, target }) => {
    const at = bytes.subarray(0, Number(node.query_location)).toString().length;
    const span = referenceSpan(parsedText, at);
    if (!span || parsedText.slice(0, span.end) !== statement.slice(0, span.end))
      throw new AsOfError(
        `lake cannot read ${String(node.table_name).slice(0, 200)} AT a version in this PIVOT: list the values of its ON columns (ON column IN (…)), or read the table in a subquery before the PIVOT.`,
      );
    const alias = span.alias ?? quoteIdentifier(String(node.table_name));
    return {
      ...span,
      start: at,
      text: `lake.${quoteIdentifier(target.schema)}.${quoteIdentifier(target.table)} AS ${alias}`,
    };
  });
  let rewritten = statement;
  for (const span of spans.sort((a, b) => b.start - a.start))
    rewritten = rewritten.slice(0, span.start) + span.text + rewritten.slice(span.end);
  return rewritten;
}

/** Where a table reference `name [[AS] alias] AT (…)` that starts at `start` ends, and its alias as written. */
function referenceSpan(sql: string, start: number): { end: number; alias?: string } | undefined {
  let tokens: Token[];
  try {
    tokens = tokenize(sql.slice(start));
  } catch {
    return undefined;
  }
  const isName = (t: Token | undefined): boolean => t?.kind === 'quoted_identifier' || t?.kind === 'word';
  let i = 0;
  if (!isName(tokens[i])) return undefined;
  i++;
  while (tokens[i]?.kind === 'symbol' && tokens[i]?.value === '.' && isName(tokens[i + 1])) i += 2;
  let alias: string | undefined;
  if (tokens[i]?.kind === 'word' && tokens[i]?.value === 'as') i++;
  const next = tokens[i];
  if (next && isName(next) && !(next.kind === 'word' && next.value === 'at')) {
    alias = sql.slice(start + next.start, start + next.end);
    i++;
  }
  if (!(tokens[i]?.kind === 'word' && tokens[i]?.value === 'at')) return undefined;
  if (!(tokens[i + 1]?.kind === 'symbol' && tokens[i + 1]?.value === '(')) return undefined;
  let depth = 0;
  for (let j = i + 1; j < tokens.length; j++) {
    const token = tokens[j] as Token;
    if (token.kind !== 'symbol') continue;
    if (token.value === '(') depth++;
    if (token.value === ')' && --depth === 0) return { end: start + token.end, ...(alias ? { alias } : {}) };
  }
  return undefined;
}

/** The most tables one statement may read AT a version or time. */
const MAX_AT_REFERENCES = 100;

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
  // A PIVOT without its values is no SELECT DuckDB can serialize: it is parsed with stand-in values (which come after
  // the tables it reads, so their places are the same in both texts), and rewritten in its own text.
  const pivot = dynamicPivot(statement);
  const parsedText = pivot ? pivot.withValues(pivot.valueQueries.map(() => [''])) : statement;
  const parsed = await parse(connection, parsedText);
  const nodes = nodesWithAt(parsed.tree);
  const references: AsOfReference[] = [];
  // Each clause is computed by lake, on the server: a statement naming hundreds of them (about 900 fit in the SQL's
  // length) took seconds of its CPU. More than anyone reads in one statement is refused, and a clause written again
  // (the same version named twice) is computed once.
  if (nodes.length > MAX_AT_REFERENCES)
    throw new AsOfError(
      `A statement may read at most ${MAX_AT_REFERENCES} tables AT a version or time; this one names ${nodes.length}. Read a version once, in a CTE, and use that.`,
    );
  const computedClauses = new Map<string, AsOfReference['at']>();
  for (const node of nodes) {
    const catalog = String(node.catalog_name ?? '');
    const schema = String(node.schema_name ?? '') || (catalog === '' ? (defaultSchema ?? '') : '');
    if ((catalog !== '' && catalog.toLowerCase() !== 'lake') || schema === '')
      throw new AsOfError(
        `Name a table read AT a version or time as <schema>.<table> or lake.<schema>.<table>, not '${String(node.table_name).slice(0, 200)}'.`,
      );
    const clause = node.at_clause as { unit: string; expr: unknown };
    assertPlain(clause.expr);
    // The clause as written, wherever it stands in the statement.
    const clauseKey = JSON.stringify(clause, (key, value: unknown) => (key === 'query_location' ? undefined : value));
    const known = computedClauses.get(clauseKey);
    if (known) {
      references.push({ schema, table: String(node.table_name), at: known });
      continue;
    }
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
          ? `SELECT TRY_CAST((${computed}) AS BIGINT) AS v, CAST((${computed}) AS DOUBLE) AS exact`
          : `SELECT epoch_ms(CAST((${computed}) AS TIMESTAMPTZ)) AS v, isinf(CAST((${computed}) AS TIMESTAMPTZ)) AS infinite`,
      )
      .then(
        (reader) => reader.getRowObjectsJS()[0],
        (error: unknown) => {
          const reason = error instanceof Error ? (error.message.split('\n')[0] ?? '').slice(0, 300) : String(error);
          throw new AsOfError(`The AT clause of ${name} is no ${notA}: ${reason}`);
        },
      );
    const value = row?.v;
    // 'infinity' is a TIMESTAMPTZ without epoch milliseconds: no point in time a snapshot was made at.
    if (row?.infinite === true)
      throw new AsOfError(`The AT clause of ${name} is no ${notA}: an infinite timestamp is no point in time.`);
    // A number past BIGINT's range (1e20) is no NULL: TRY_CAST gives NULL for it where its DOUBLE is a number.
    const pastBigint = unit === 'VERSION' && (value === null || value === undefined) && typeof row?.exact === 'number';
    if (!pastBigint && (value === null || value === undefined))
      throw new AsOfError(`The AT clause of ${name} is NULL.`);
    // Snapshot ids are counted up from 0; past 2^53 a number would stand for another (9223372036854775807 read as …6000).
    if (unit === 'VERSION' && (pastBigint || !Number.isSafeInteger(Number(value))))
      throw new AsOfError(
        `The AT clause of ${name} is no ${notA}: ${String(pastBigint ? row?.exact : value)} is past any snapshot lake numbers.`,
      );
    // A snapshot id is a whole number: 3.5 is none (a cast to BIGINT would round it to another snapshot).
    if (unit === 'VERSION' && Number(value) !== Number(row?.exact))
      throw new AsOfError(`The AT clause of ${name} is no ${notA}: ${String(row?.exact)} is not a whole number.`);
    if (unit === 'VERSION' && Number(value) < 0)
      throw new AsOfError(
        `The AT clause of ${name} is no ${notA}: snapshots are numbered from 0, not ${String(value)}.`,
      );
    const at = unit === 'VERSION' ? { version: Number(value) } : { time: Number(value) };
    computedClauses.set(clauseKey, at);
    references.push({ schema, table: String(node.table_name), at });
  }
  return {
    references,
    rewrite: async (name) => {
      if (pivot)
        return rewriteInText(
          statement,
          parsedText,
          nodes.map((node, index) => ({ node, target: name(references[index] as AsOfReference, index) })),
        );
      await nameAsWritten(connection, parsed, new Set(nodes));
      const boundByName: AsOfReference[] = [];
      for (const [index, node] of nodes.entries()) {
        const reference = references[index] as AsOfReference;
        const target = name(reference, index);
        // Without an alias of its own, the table keeps binding under its name (`orders.status`), not lake's.
        if (!node.alias) {
          node.alias = node.table_name;
          boundByName.push(reference);
        }
        node.catalog_name = 'lake';
        node.schema_name = target.schema;
        node.table_name = target.table;
        node.at_clause = null;
      }
      unqualifyColumns(parsed.tree, boundByName);
      return (await unparse(connection, parsed)).replace(/;\s*$/, '');
    },
  };
}

/**
 * DuckDB's message about a statement lake rewrote to read tables AT versions, as about the statement sent: a
 * relation of the rewrite (`lake.shop."items␡42"`) named as the statement names it (`shop.items AT (VERSION =>
 * 42)`), and without the line of context DuckDB quotes, which shows the rewritten statement, not the caller's.
 */
export function messageAsWritten(message: string): string {
  return message
    .replace(/\n\s*LINE \d+:[\s\S]*$/, '')
    .replace(
      /(?:lake\.)?(?:("?)([^".\s]+)\1\.)?"([^"]+)\u007f(\d+)"/g,
      (_all, _q: string, schema: string | undefined, table: string, n: string) =>
        `${schema ? `${schema}.` : ''}${table} AT (VERSION => ${n})`,
    )
    .trim();
}
