/**
 * Checks a request's parts against their schemas and says what is wrong in the terms a caller uses: which
 * parameter (`param`, in dotted form: `destination.port`, `elements[0].name`), missing or invalid, and what it must
 * be. The API layer turns a problem into its error envelope.
 */
import { Check, Errors } from 'typebox/schema';
import type { TSchema } from './schema.js';

export interface Problem {
  kind: 'missing' | 'invalid' | 'unknown';
  param: string;
  message: string;
}

export type Checked<T> = { ok: true; value: T } | { ok: false; problem: Problem };

type Node = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, Node>;
  additionalProperties?: boolean | Node;
  items?: Node;
  anyOf?: Node[];
  const?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  pattern?: string;
  description?: string;
};

const segments = (pointer: string): string[] =>
  pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));

/** A name from the request, as it is echoed back: never longer than this (a caller chooses field and parameter names). */
const MAX_NAME = 64;
export const shown = (part: string): string => (part.length > MAX_NAME ? `${part.slice(0, MAX_NAME)}…` : part);

/** `/elements/0/name` → `elements[0].name`, under `prefix` when given. */
function paramOf(parts: readonly string[], prefix = ''): string {
  let out = prefix;
  for (const part of parts.map(shown)) out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  return out;
}

function schemaAt(root: Node, parts: readonly string[]): Node | undefined {
  let node: Node | undefined = root;
  for (const part of parts) {
    if (!node) return undefined;
    if (node.anyOf) node = node.anyOf.find((n) => n.type === 'object' || n.type === 'array') ?? node.anyOf[0];
    if (!node) return undefined;
    if (node.type === 'array') node = node.items;
    else
      node =
        node.properties?.[part] ??
        (typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined);
  }
  return node;
}

/** What a value of this schema is, in words: "a whole number from 1 to 30", "one of files, inline". */
export function describe(node: Node | undefined): string {
  if (!node) return 'valid';
  if (node.anyOf) {
    const consts = node.anyOf.filter((n) => n.const !== undefined).map((n) => String(n.const));
    if (consts.length === node.anyOf.length) return `one of ${consts.join(', ')}`;
    return node.anyOf.map(describe).join(' or ');
  }
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (node.enum) return `one of ${node.enum.join(', ')}`;
  const range =
    node.minimum !== undefined && node.maximum !== undefined
      ? ` from ${node.minimum} to ${node.maximum}`
      : node.minimum !== undefined
        ? ` of at least ${node.minimum}`
        : '';
  switch (node.type) {
    case 'string':
      if (node.pattern) return `a string matching ${node.pattern}`;
      return node.maxLength !== undefined
        ? `a string of ${node.minLength ?? 0} to ${node.maxLength} characters`
        : node.minLength
          ? 'a non-empty string'
          : 'a string';
    case 'integer':
      return `a whole number${range}`;
    case 'number':
      return `a number${range}`;
    case 'boolean':
      return 'true or false';
    case 'null':
      return 'null';
    case 'array':
      return node.minItems
        ? `a non-empty list of ${plural(describe(node.items))}`
        : `a list of ${plural(describe(node.items))}`;
    case 'object':
      return 'an object';
    default:
      return 'valid';
  }
}

const plural = (what: string): string =>
  what
    .replace(/^an? (\w+)/, (_, noun: string) => `${noun}s`)
    .replace(/^whole numbers/, 'whole numbers')
    .replace(/^trues or false/, 'booleans');

/** Checks `value` against `schema`; `prefix` names where it sits (`destination` for a nested object). */
export function check<T>(schema: TSchema, value: unknown, prefix = ''): Checked<T> {
  // The common case costs one check; the errors are gathered only for a request that fails it.
  if (Check(schema as never, value)) return { ok: true, value: value as T };
  const [, errors] = Errors(schema as never, value) as unknown as [
    boolean,
    { instancePath: string; keyword: string; params: Record<string, unknown> }[],
  ];
  const root = schema as unknown as Node;
  const meaningful = errors.filter((e) => e.keyword !== 'boolean');
  const first =
    meaningful.find((e) => e.keyword === 'required' || e.keyword === 'additionalProperties') ??
    meaningful[0] ??
    errors[0];
  if (!first)
    return { ok: false, problem: { kind: 'invalid', param: prefix, message: `${prefix || 'The body'} is not valid.` } };
  const parts = segments(first.instancePath);
  if (first.keyword === 'required') {
    const name = String((first.params.requiredProperties as string[] | undefined)?.[0] ?? '');
    const param = paramOf([...parts, name], prefix);
    return {
      ok: false,
      problem: {
        kind: 'missing',
        param,
        message: `The request needs ${param}: ${describe(schemaAt(root, [...parts, name]))}.`,
      },
    };
  }
  if (first.keyword === 'additionalProperties') {
    const name = String((first.params.additionalProperties as string[] | undefined)?.[0] ?? '');
    const known = Object.keys(schemaAt(root, parts)?.properties ?? {});
    const param = paramOf([...parts, name], prefix);
    return {
      ok: false,
      problem: {
        kind: 'unknown',
        param,
        message: `Unknown field '${param}'.${known.length ? ` Known fields: ${known.join(', ')}.` : ''}`,
      },
    };
  }
  // A value matching none of a union's alternatives gets an error per alternative; the union's description covers them.
  const param = paramOf(parts, prefix);
  return {
    ok: false,
    problem: { kind: 'invalid', param, message: `${param || 'The body'} must be ${describe(schemaAt(root, parts))}.` },
  };
}
