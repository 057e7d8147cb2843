/**
 * The building blocks of the contract: TypeBox schemas are plain JSON Schema (2020-12, what OpenAPI 3.1 uses) with
 * static TypeScript types, so one definition gives the document, the validation and the types.
 */
import type { Static, TLiteral, TObject, TProperties, TSchema, TUnion } from 'typebox';
import {
  Array as ArrayOf,
  Boolean as BooleanType,
  Integer,
  Literal,
  Null,
  Number as NumberType,
  Object as ObjectOf,
  Optional,
  String as StringType,
  Union,
  Unknown,
  Unsafe,
} from 'typebox/type';

export type { Static, TObject, TProperties, TSchema };

/**
 * The builders the contract uses, imported one by one: `import Type from 'typebox'` bundles all of TypeBox
 * (~160 KB, and TypeBox's Record alone ~90 KB of key-type machinery), which every CLI start would load from its
 * code cache. A record here is a string-keyed object whose values all match one schema, which is all the API has.
 */
export const Type = {
  Array: ArrayOf,
  Boolean: BooleanType,
  Integer,
  Literal,
  Null,
  Number: NumberType,
  Object: ObjectOf,
  Optional,
  String: StringType,
  Union,
  Unknown,
  Record: <T extends TSchema>(_key: TSchema, value: T, options: { description?: string } = {}) =>
    Unsafe<Record<string, Static<T>>>({ type: 'object', additionalProperties: value, ...options }),
};

/** One of these strings, typed as exactly these (a union of literals). */
export const OneOf = <const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number] } = {},
) =>
  Union(
    values.map((value) => Literal(value)),
    options,
  ) as unknown as TUnion<{ -readonly [K in keyof T]: TLiteral<T[K]> }>;

/** One of a list of strings known only as a list (not a tuple), typed as the list's element type. */
export const OneOfList = <T extends string>(values: readonly T[]) =>
  Unsafe<T>({ anyOf: values.map((value) => ({ type: 'string', const: value })) });

export const Timestamp = Type.Integer({ minimum: 0, description: 'Timestamp, epoch seconds.' });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A response object: every field it may carry is listed, so a field produced but never documented fails the contract tests. */
export const Strict = <T extends Record<string, TSchema>>(properties: T, description?: string) =>
  Type.Object(properties, { additionalProperties: false, ...(description ? { description } : {}) });

/** `{code, message}` of a failed job, run, sync or query. */
export const Failure = Strict(
  { code: Type.String(), message: Type.String() },
  'Why the work failed: a stable code and a readable message.',
);

/** The list envelope of every paged collection. */
export const List = <T extends TSchema>(item: T) =>
  Strict({
    object: Type.Literal('list'),
    data: Type.Array(item),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as starting_after for the next page; null when no more.',
    }),
  });

export const pageQuery = (defaultLimit: number, maxLimit: number) => ({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: maxLimit,
      default: defaultLimit,
      description: `Items per page, 1 to ${maxLimit}.`,
    }),
  ),
  starting_after: Type.Optional(Type.String({ minLength: 1, description: 'The next_cursor of the previous page.' })),
});
