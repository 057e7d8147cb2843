/**
 * DuckDB's parse trees (`json_serialize_sql`) as JavaScript values, and back (`json_deserialize_sql`). The text is
 * not quite JSON, and JSON.parse would change some of it:
 * - a DOUBLE constant JSON cannot write is a bare `Infinity`, `-Infinity` or `NaN` (`1e400`), which JSON.parse
 *   refuses;
 * - a 64-bit integer past 2^53 (a BIGINT constant, "no position" as 2^64 - 1) would be rounded;
 * - a DOUBLE written with a fraction or an exponent (`10.0`) would come back as `10`, which json_deserialize_sql
 *   refuses as no double.
 * Each such token is carried through as a string marked with `marker` (random per statement, so no constant of the
 * caller's can pass for one) and written back exactly as it was, so no constant of a statement changes on its way
 * through lake.
 */
const TOKENS = /"(?:[^"\\]|\\.)*"|-?(?:Infinity|NaN)|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/** An integer JavaScript holds exactly: written back the same by JSON.stringify. */
const SAFE_INTEGER = /^-?\d{1,15}$/;

export function parseTree(text: string, marker: string): unknown {
  return JSON.parse(
    text.replace(TOKENS, (token) =>
      token.startsWith('"') || SAFE_INTEGER.test(token) ? token : `"${marker}${token}"`,
    ),
  );
}

/**
 * A tree read for its names alone, never written back, so its numbers need not be exact: JSON.parse, which every
 * statement's check runs, and parseTree only for a tree JSON cannot read (a DOUBLE that is not finite).
 */
export function readTree(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return parseTree(text, 'lake-number:');
  }
}

/**
 * The tree as json_deserialize_sql reads it, for SQL text that means the same. A DOUBLE (or FLOAT) constant goes as
 * the cast of its text (`CAST('0.1' AS DOUBLE)`): DuckDB writes one back as `0.1`, which reads as a DECIMAL (so
 * `0.1e0 + 0.2e0 = 0.3e0` would turn true), and cannot read one that is not finite at all.
 */
export function stringifyTree(tree: unknown, marker: string): string {
  const readable = (_key: string, node: unknown): unknown => {
    const constant = node as ConstantNode | null;
    const value = constant?.value;
    if (constant?.class !== 'CONSTANT' || value?.is_null !== false || !FLOATING.has(String(value.type?.id)))
      return node;
    const raw = typeof value.value === 'string' ? value.value.replace(marker, '') : String(value.value);
    return {
      class: 'CAST',
      type: 'OPERATOR_CAST',
      alias: constant.alias ?? '',
      query_location: constant.query_location,
      child: {
        ...constant,
        alias: '',
        value: { type: { id: 'VARCHAR', type_info: null }, is_null: false, value: FLOAT_TEXT[raw] ?? raw },
      },
      cast_type: value.type,
      try_cast: false,
    };
  };
  return JSON.stringify(tree, readable).replace(new RegExp(`"${escapeRegExp(marker)}([^"]*)"`, 'g'), '$1');
}

const FLOATING = new Set(['DOUBLE', 'FLOAT']);

/** DuckDB's text of the values JSON has no number for. */
const FLOAT_TEXT: Record<string, string> = { Infinity: 'inf', '-Infinity': '-inf', NaN: 'nan', '-NaN': 'nan' };

interface ConstantNode {
  class?: unknown;
  alias?: unknown;
  query_location?: unknown;
  value?: { type?: { id?: unknown }; is_null?: unknown; value?: unknown };
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
