import type { RouteContract } from '../contract/route.js';
import type { Static, TObject } from '../contract/schema.js';
import { usageError } from './exit-codes.js';

/** A `--limit` flag's value: a whole number from 1 to `max`, or a usage error. */
export function checkedLimit(value: string | undefined, fallback: number, max: number): number {
  const limit = Number(value ?? fallback);
  if (!Number.isInteger(limit) || limit < 1 || limit > max)
    throw usageError(`--limit must be a whole number from 1 to ${max}.`);
  return limit;
}

/**
 * Flags that become a route's query parameters, checked against the route's own schema before anything is sent: a
 * value it would refuse (a status no job has, a month that is no month) is a usage error (exit 2, as any bad flag
 * value), with the values or the form it takes. The flag is the parameter's name with dashes.
 */
export function checkedQuery<R extends RouteContract & { query: TObject }>(
  route: R,
  query: Record<string, string | number | undefined>,
): Static<R['query']> {
  for (const [name, value] of Object.entries(query)) {
    if (typeof value !== 'string') continue;
    const schema = route.query.properties[name] as
      { anyOf?: { const?: unknown }[]; pattern?: string; examples?: unknown[] } | undefined;
    const flag = `--${name.replace(/_/g, '-')}`;
    const choices = schema?.anyOf?.map((option) => option.const);
    if (choices?.every((choice): choice is string => typeof choice === 'string') && !choices.includes(value))
      throw usageError(`${flag} must be ${inWords(choices)}, not '${value.slice(0, 40)}'.`);
    if (schema?.pattern !== undefined && !new RegExp(schema.pattern).test(value))
      throw usageError(
        `${flag} must look like ${String(schema.examples?.[0] ?? schema.pattern)}, not '${value.slice(0, 40)}'.`,
      );
  }
  // Checked above against the schema the type is made from.
  return query as Static<R['query']>;
}

/** "a, b or c". */
function inWords(values: readonly string[]): string {
  return values.length < 2 ? (values[0] ?? '') : `${values.slice(0, -1).join(', ')} or ${values.at(-1) ?? ''}`;
}
