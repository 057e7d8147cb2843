import type { QueryParameterObject } from '../../contract/types.js';
import { usageError } from '../exit-codes.js';

type ParameterType = NonNullable<QueryParameterObject['type']>;

/** The type suffixes `-p name:type=value` takes, in the words people type (and the API's own names). */
const TYPE_NAMES: Record<string, ParameterType> = {
  string: 'STRING',
  str: 'STRING',
  text: 'STRING',
  varchar: 'STRING',
  int: 'INTEGER',
  integer: 'INTEGER',
  bigint: 'BIGINT',
  long: 'BIGINT',
  decimal: 'DECIMAL',
  numeric: 'DECIMAL',
  double: 'DOUBLE',
  float: 'DOUBLE',
  bool: 'BOOLEAN',
  boolean: 'BOOLEAN',
  date: 'DATE',
  timestamp: 'TIMESTAMP',
  ts: 'TIMESTAMP',
};

/**
 * The values of `-p NAME[:TYPE]=VALUE` flags as the API takes them: named for `$name`, or, with names 1, 2, …,
 * in order for `?` and `$1`. A flag without `=VALUE` is NULL. Undefined when no flag was given.
 */
export function parseParameterFlags(flags: readonly string[] | undefined): QueryParameterObject[] | undefined {
  if (!flags || flags.length === 0) return undefined;
  const parsed = flags.map((flag) => {
    const equals = flag.indexOf('=');
    const head = equals < 0 ? flag : flag.slice(0, equals);
    const value = equals < 0 ? null : flag.slice(equals + 1);
    const [name = '', typeName, ...rest] = head.split(':');
    if (rest.length > 0 || !/^([A-Za-z_][A-Za-z0-9_]*|\d+)$/.test(name))
      throw usageError(
        `-p ${flag.slice(0, 60)}: write it as NAME=VALUE, NAME:TYPE=VALUE, or NAME alone for NULL (NAME 1, 2, … for ? and $1).`,
      );
    const type = typeName === undefined ? undefined : TYPE_NAMES[typeName.toLowerCase()];
    if (typeName !== undefined && !type)
      throw usageError(
        `-p ${flag.slice(0, 60)}: unknown type '${typeName}'. Types: ${Object.keys(TYPE_NAMES).join(', ')}.`,
      );
    return { name, value, ...(type ? { type } : {}) };
  });
  const positional = parsed.filter((p) => /^\d+$/.test(p.name));
  if (positional.length > 0 && positional.length < parsed.length)
    throw usageError('-p takes names ($name) or positions (1, 2, … for ? and $1), not both.');
  if (positional.length === 0) return parsed;
  const byIndex = new Map(positional.map((p) => [Number(p.name), p]));
  if (byIndex.size !== positional.length || [...byIndex.keys()].some((n) => n < 1 || n > positional.length))
    throw usageError(`-p positions must be 1 to ${positional.length}, each once.`);
  return [...byIndex.keys()]
    .sort((a, b) => a - b)
    .map((n) => {
      const { name: _position, ...value } = byIndex.get(n) as (typeof positional)[number];
      return value;
    });
}
