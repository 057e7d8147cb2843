import { CATALOG_ROUTES } from '../../contract/routes.js';
import type { LakeClient } from '../../client/lake-client.js';

const KEYWORDS = [
  'SELECT',
  'FROM',
  'WHERE',
  'GROUP BY',
  'ORDER BY',
  'HAVING',
  'LIMIT',
  'OFFSET',
  'JOIN',
  'LEFT JOIN',
  'INNER JOIN',
  'FULL JOIN',
  'CROSS JOIN',
  'ON',
  'USING',
  'AS',
  'AND',
  'OR',
  'NOT',
  'NULL',
  'IS',
  'IN',
  'LIKE',
  'ILIKE',
  'BETWEEN',
  'DISTINCT',
  'CASE',
  'WHEN',
  'THEN',
  'ELSE',
  'END',
  'WITH',
  'UNION',
  'UNION ALL',
  'EXCEPT',
  'INTERSECT',
  'EXISTS',
  'ASC',
  'DESC',
  'NULLS FIRST',
  'NULLS LAST',
  'OVER',
  'PARTITION BY',
  'QUALIFY',
  'WINDOW',
  'FILTER',
  'EXPLAIN',
  'EXPLAIN ANALYZE',
  'TRUE',
  'FALSE',
  'CAST',
  'INTERVAL',
  'DATE',
  'TIMESTAMP',
];

const FUNCTIONS = [
  'count',
  'sum',
  'avg',
  'min',
  'max',
  'median',
  'quantile_cont',
  'mode',
  'stddev',
  'string_agg',
  'list',
  'array_agg',
  'arg_max',
  'arg_min',
  'approx_count_distinct',
  'coalesce',
  'nullif',
  'greatest',
  'least',
  'round',
  'floor',
  'ceil',
  'abs',
  'length',
  'lower',
  'upper',
  'trim',
  'substr',
  'replace',
  'split_part',
  'concat',
  'regexp_matches',
  'regexp_replace',
  'regexp_extract',
  'strftime',
  'strptime',
  'date_trunc',
  'date_part',
  'date_diff',
  'now',
  'current_date',
  'epoch',
  'to_timestamp',
  'row_number',
  'rank',
  'dense_rank',
  'lag',
  'lead',
  'first_value',
  'last_value',
  'unnest',
  'generate_series',
  'range',
  'hash',
  'md5',
  'json_extract',
  'json_extract_string',
];

/** Words that may follow a table name without being its alias. */
const NOT_AN_ALIAS: ReadonlySet<string> = new Set([
  'where',
  'join',
  'left',
  'right',
  'inner',
  'outer',
  'full',
  'cross',
  'natural',
  'on',
  'using',
  'group',
  'order',
  'having',
  'limit',
  'offset',
  'union',
  'except',
  'intersect',
  'window',
  'qualify',
  'as',
  'pivot',
  'unpivot',
  'sample',
  'tablesample',
]);

/** A table the statement names, and the qualifiers it may be referred to by (its alias, or its own name). */
interface NamedTable {
  schema: string;
  table: string;
  qualifiers: string[];
}

/**
 * Completion of SQL words for the shell: keywords, function names, and the schema, table and column names the
 * credential may see, learnt from the catalog on first use (columns of a table when it is first named). Names
 * complete as written in README: `lake.schema.table`, `schema.table`, `schema.table.column`, and `alias.column`
 * for a table the statement gave an alias (or `table.column` for one it did not).
 */
export class SqlCompleter {
  private schemas: string[] | undefined;
  private readonly tables = new Map<string, string[]>();
  private readonly columns = new Map<string, string[]>();

  constructor(private readonly client: LakeClient) {}

  /**
   * Candidates for the word at the end of `line`, and that word (readline replaces it with the one chosen).
   * `statement` is everything typed of the statement so far, earlier lines included.
   */
  async complete(line: string, statement: string = line): Promise<[string[], string]> {
    const word = /[\w."]*$/.exec(line)?.[0] ?? '';
    const bare = word.replace(/"/g, '');
    const names = await this.namesFor(bare, statement).catch(() => [] as string[]);
    const lower = bare.toLowerCase();
    const upper = word === word.toUpperCase() && /[A-Z]/.test(word);
    const words = bare.includes('.')
      ? names
      : [
          ...KEYWORDS.map((k) => (upper || word === '' ? k : k.toLowerCase())),
          ...FUNCTIONS.map((f) => `${f}(`),
          ...names,
        ];
    const hits = [...new Set(words.filter((w) => w.toLowerCase().startsWith(lower)))].sort();
    return [word === '' ? [] : hits, word];
  }

  private async namesFor(word: string, statement: string): Promise<string[]> {
    const schemas = await this.schemaNames();
    const parts = word.split('.');
    const inLake = parts.length >= 2 && parts[0]?.toLowerCase() === 'lake';
    const prefix = inLake ? 'lake.' : '';
    const path = inLake ? parts.slice(1) : parts;
    const schemaOf = (name: string): string | undefined => schemas.find((s) => s.toLowerCase() === name.toLowerCase());
    if (path.length === 1) {
      // A schema, or (outside lake.) a column of a table the statement names.
      const own = schemas.map((s) => `${prefix}${s}.`);
      if (inLake) return own;
      const named = await this.namedTables(statement);
      const columns = (await Promise.all(named.map((t) => this.columnNames(t.schema, t.table)))).flat();
      return ['lake.', ...own, ...columns];
    }
    const [first = '', second = ''] = path;
    if (path.length === 2) {
      const names: string[] = [];
      const schema = schemaOf(first);
      if (schema) names.push(...(await this.tableNames(schema)).map((t) => `${prefix}${schema}.${t}`));
      if (!inLake)
        for (const named of await this.namedTables(statement))
          if (named.qualifiers.includes(first.toLowerCase()))
            names.push(...(await this.columnNames(named.schema, named.table)).map((c) => `${first}.${c}`));
      return names;
    }
    const schema = schemaOf(first);
    if (path.length === 3 && schema) {
      const table = (await this.tableNames(schema)).find((t) => t.toLowerCase() === second.toLowerCase());
      if (table) return (await this.columnNames(schema, table)).map((c) => `${prefix}${schema}.${table}.${c}`);
    }
    return [];
  }

  /** The lake tables the statement names (`[lake.]schema.table [[AS] alias]`), with what may qualify their columns. */
  private async namedTables(statement: string): Promise<NamedTable[]> {
    const schemas = await this.schemaNames();
    const found: NamedTable[] = [];
    const pattern = /\b(?:lake\.)?(\w+)\.(\w+)\b(?!\.)(?:\s+(?:as\s+)?(\w+))?/gi;
    for (const match of statement.matchAll(pattern)) {
      const [, schemaWritten = '', table = '', alias] = match;
      const schema = schemas.find((s) => s.toLowerCase() === schemaWritten.toLowerCase());
      if (!schema) continue;
      const qualifiers = [table.toLowerCase()];
      if (alias && !NOT_AN_ALIAS.has(alias.toLowerCase())) qualifiers.unshift(alias.toLowerCase());
      found.push({ schema, table, qualifiers });
    }
    return found;
  }

  private async schemaNames(): Promise<string[]> {
    this.schemas ??= (await this.client.read(CATALOG_ROUTES.listSchemas, {})).data.map((s) => s.name);
    return this.schemas;
  }

  private async tableNames(schema: string): Promise<string[]> {
    if (!this.tables.has(schema))
      this.tables.set(
        schema,
        (await this.client.read(CATALOG_ROUTES.listTables, { params: { schema } })).data.map((t) => t.name),
      );
    return this.tables.get(schema) ?? [];
  }

  private async columnNames(schema: string, table: string): Promise<string[]> {
    const key = `${schema}.${table}`;
    if (!this.columns.has(key)) {
      const described = await this.client
        .read(CATALOG_ROUTES.getTable, { params: { schema, table } })
        // A name the credential cannot describe completes nothing: TAB never prints an error.
        .catch(() => undefined);
      this.columns.set(key, described?.columns.map((c) => c.name) ?? []);
    }
    return this.columns.get(key) ?? [];
  }
}
