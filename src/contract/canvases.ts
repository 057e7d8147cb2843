import { Nullable, Strict, Timestamp, Type } from './schema.js';

export const CanvasElement = Strict({
  object: Type.Literal('canvas_element'),
  id: Type.String({ pattern: '^el_' }),
  name: Type.String(),
  kind: Type.Union([Type.Literal('query'), Type.Literal('table')]),
  sql: Nullable(Type.String()),
  table: Nullable(Type.String({ description: '`schema.table` of a lake table.' })),
  created: Timestamp,
});

export const Canvas = Strict({
  object: Type.Literal('canvas'),
  id: Type.String({ pattern: '^cnv_' }),
  name: Type.String(),
  created: Timestamp,
  updated: Timestamp,
  elements: Type.Array(CanvasElement),
});

export const ElementInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    sql: Type.Optional(Type.String({ description: 'A saved query; give either sql or table.' })),
    table: Type.Optional(Type.String({ description: '`schema.table` of a lake table; give either sql or table.' })),
  },
  { additionalProperties: false },
);

export const CanvasCreation = Strict({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  elements: Type.Optional(
    Type.Array(ElementInput, {
      maxItems: 100,
      description: 'At most 100 table elements, with 100,000 characters of SQL in all.',
    }),
  ),
});

export const TableDataRequest = Type.Object(
  { canvasId: Type.String(), elementId: Type.String() },
  { additionalProperties: false },
);

export const TableData = Strict(
  {
    object: Type.Literal('table_data'),
    canvas_id: Type.String(),
    element_id: Type.String(),
    name: Type.String(),
    columns: Type.Array(Strict({ name: Type.String(), type: Type.String() })),
    rows: Type.Array(Type.Record(Type.String(), Type.Unknown())),
    row_count: Type.Integer({ minimum: 0 }),
    returned: Type.Integer({ minimum: 0 }),
    truncated: Type.Boolean(),
  },
  "A canvas element's table (the legacy download).",
);

export const CanvasDeletion = Strict({
  object: Type.Literal('canvas_deletion'),
  id: Type.String(),
  deleted: Type.Literal(true),
});
