import type { DuckDBConnection, DuckDBPreparedStatement, DuckDBValue } from '@duckdb/node-api';
import { PARAMETER_TYPES } from '../../contract/queries.js';
import { LakeServiceError } from '../core/errors.js';

export type ParameterType = (typeof PARAMETER_TYPES)[number];

/** A value bound to a statement parameter: `$name` by name, `?` and `$1` by position (no name). */
export interface QueryParameter {
  name?: string;
  value: string | null;
  type?: ParameterType;
}

/** A parameter the statement holds: `$name`, or the n-th positional one (`?` in order, `$n`). */
export type StatementParameter = ({ kind: 'named'; name: string } | { kind: 'positional'; index: number }) & {
  /** As written: `$name`, `$2`, `?`. */
  text: string;
};

/** The DuckDB type a parameter's text is read as; a DECIMAL keeps the scale its text has. */
function duckdbType(parameter: QueryParameter): string {
  switch (parameter.type ?? 'STRING') {
    case 'STRING':
      return 'VARCHAR';
    case 'DECIMAL': {
      const scale = /\.(\d+)$/.exec(parameter.value ?? '')?.[1]?.length ?? 0;
      return `DECIMAL(38, ${Math.min(scale, 37)})`;
    }
    default:
      return parameter.type as string;
  }
}

/**
 * Binds a prepared statement's parameters to their values. Each value's text is read as its type by DuckDB itself
 * (a bound `CAST($1 AS type)`, never the value written into SQL), so a DATE or DECIMAL means exactly what it would
 * in DuckDB; a STRING is bound as text and takes the type its place in the statement asks for.
 */
export async function bindParameters(
  connection: DuckDBConnection,
  prepared: DuckDBPreparedStatement,
  parameters: readonly QueryParameter[],
): Promise<void> {
  const values = await Promise.all(parameters.map((p) => typedValue(connection, p)));
  for (let i = 1; i <= prepared.parameterCount; i++) {
    const name = prepared.parameterName(i);
    const index = /^\d+$/.test(name)
      ? Number(name) - 1
      : parameters.findIndex((p) => p.name?.toLowerCase() === name.toLowerCase());
    const parameter = parameters[index];
    if (!parameter) throw new Error(`No value is given for the statement's parameter $${name}.`);
    const value = values[index];
    if (parameter.value === null) prepared.bindNull(i);
    else if (typeof value === 'string') prepared.bindVarchar(i, value);
    else prepared.bindValue(i, value as DuckDBValue);
  }
}

async function typedValue(connection: DuckDBConnection, parameter: QueryParameter): Promise<DuckDBValue | string> {
  if (parameter.value === null || (parameter.type ?? 'STRING') === 'STRING') return parameter.value ?? '';
  const cast = await connection.prepare(`SELECT CAST($1 AS ${duckdbType(parameter)})`);
  cast.bindVarchar(1, parameter.value);
  try {
    return ((await cast.runAndReadAll()).getRows()[0]?.[0] ?? null) as DuckDBValue;
  } catch (error) {
    const label = parameter.name === undefined ? 'A positional parameter' : `The parameter ${parameter.name}`;
    throw new Error(
      `${label} is not a valid ${parameter.type}: ${error instanceof Error ? error.message : String(error)}`,
    );
  } finally {
    cast.destroySync();
  }
}

/** How each type's text must look; DuckDB reads it at run time, this refuses the obvious mistakes at once. */
const VALUE_SHAPES: Record<Exclude<ParameterType, 'STRING'>, RegExp> = {
  INTEGER: /^[+-]?\d{1,10}$/,
  BIGINT: /^[+-]?\d{1,19}$/,
  DECIMAL: /^[+-]?(\d{1,38}(\.\d{0,37})?|\.\d{1,37})$/,
  DOUBLE: /^([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|infinity)|nan)$/i,
  BOOLEAN: /^(true|false|t|f|1|0|yes|no|y|n)$/i,
  DATE: /^\d{4}-\d{2}-\d{2}$/,
  TIMESTAMP: /^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/,
};

/**
 * Checks the values given against the parameters the statement holds, before anything runs: every parameter has a
 * value, every value a parameter, named values for `$name`, values in order for `?` and `$n`.
 */
export function matchParameters(found: readonly StatementParameter[], given: readonly QueryParameter[]): void {
  const refuse = (message: string, param = 'parameters'): never => {
    throw new LakeServiceError('parameter_invalid', message, { param });
  };
  for (const [i, parameter] of given.entries()) {
    const type = parameter.type ?? 'STRING';
    if (parameter.value !== null && type !== 'STRING' && !VALUE_SHAPES[type].test(parameter.value.trim()))
      refuse(`parameters[${i}] is not a valid ${type}: '${parameter.value.slice(0, 40)}'.`, `parameters[${i}].value`);
  }
  const named = found.filter((p) => p.kind === 'named');
  if (named.length > 0 && named.length < found.length)
    refuse('The SQL mixes named ($name) and positional (?, $1) parameters; use one kind.', 'sql');
  const withNames = given.filter((p) => p.name !== undefined).length;
  if (withNames > 0 && withNames < given.length)
    refuse('Give every parameter a name (for $name) or none (for ? and $1, in order).');
  if (found.length === 0 && given.length > 0) refuse('The SQL has no parameters ($name, ?, $1) to give values to.');
  if (named.length > 0) {
    if (withNames === 0) refuse('The SQL has named parameters ($name): give each value its name.');
    const names = new Set(named.map((p) => p.name.toLowerCase()));
    const seen = new Set<string>();
    for (const [i, parameter] of given.entries()) {
      const name = (parameter.name as string).toLowerCase();
      if (seen.has(name)) refuse(`The parameter ${parameter.name} is given twice.`, `parameters[${i}].name`);
      seen.add(name);
      if (!names.has(name)) refuse(`The SQL has no parameter $${parameter.name}.`, `parameters[${i}].name`);
    }
    const missing = [...names].find((name) => !seen.has(name));
    if (missing !== undefined) refuse(`No value is given for the SQL's parameter $${missing}.`);
    return;
  }
  if (found.length > 0 && withNames > 0)
    refuse('The SQL has positional parameters (?, $1): give the values without names, in order.');
  const count = Math.max(0, ...found.map((p) => (p.kind === 'positional' ? p.index : 0)));
  if (count !== given.length)
    refuse(
      `The SQL has ${count} positional parameter${count === 1 ? '' : 's'}; ${given.length} value${given.length === 1 ? ' is' : 's are'} given.`,
    );
}
