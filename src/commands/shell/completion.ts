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

/**
 * Completion of SQL words for the shell: keywords, function names, and the schema, table and column names the
 * credential may see, learnt from the catalog on first use (columns of a table when it is first named).
 */
export class SqlCompleter {
  private schemas: string[] | undefined;
  private readonly tables = new Map<string, string[]>();
  private readonly columns = new Map<string, string[]>();

  constructor(private readonly client: LakeClient) {}

  /** Candidates for the word at the end of `line`, and that word (readline replaces it with the one chosen). */
  async complete(line: string): Promise<[string[], string]> {
    const word = /[\w."]*$/.exec(line)?.[0] ?? '';
    const bare = word.replace(/"/g, '');
    const names = await this.namesFor(bare, line).catch(() => [] as string[]);
    const lower = bare.toLowerCase();
    const upper = word === word.toUpperCase() && /[A-Z]/.test(word);
    const words = [
      ...KEYWORDS.map((k) => (upper || word === '' ? k : k.toLowerCase())),
      ...FUNCTIONS.map((f) => `${f}(`),
      ...names,
    ];
    const hits = [...new Set(words.filter((w) => w.toLowerCase().startsWith(lower)))].sort();
    return [word === '' ? [] : hits, word];
  }

  private async namesFor(word: string, line: string): Promise<string[]> {
    const schemas = await this.schemaNames();
    const dot = word.split('.');
    if (dot.length >= 2) {
      // schema.table, or lake.schema.table
      const [first, second] = dot[0] === 'lake' ? [dot[1] ?? '', dot.length] : [dot[0] ?? '', dot.length];
      const prefix = dot[0] === 'lake' ? 'lake.' : '';
      if (schemas.includes(first) && (second === 2 || dot[0] === 'lake'))
        return (await this.tableNames(first)).map((t) => `${prefix}${first}.${t}`);
    }
    // Columns of the tables the statement names so far.
    const named = [...line.matchAll(/\b(?:lake\.)?(\w+)\.(\w+)\b/g)].filter((m) => schemas.includes(m[1] as string));
    const columns = (await Promise.all(named.map((m) => this.columnNames(m[1] as string, m[2] as string)))).flat();
    return [...schemas.map((s) => `${s}.`), ...columns];
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
