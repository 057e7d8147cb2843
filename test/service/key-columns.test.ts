import { describe, expect, it } from 'vitest';
import type { SourceTable } from '../../src/service/connectors/types.js';
import { checkKeyColumns, keyColumnsProblem } from '../../src/service/syncs/key-columns.js';

const table = (over: Partial<SourceTable>): SourceTable => ({
  schema: 's',
  name: 't',
  columns: [],
  primaryKey: ['id', 'part'],
  estimatedRows: null,
  enabled: true,
  mode: 'incremental',
  cursorColumn: 'at',
  ...over,
});

describe('a table key that names columns the table lacks', () => {
  it('fails the tables that merge or compare by it, naming what is missing', () => {
    for (const over of [{}, { mode: 'cdc' as const }, { mode: 'full' as const, detectDeletes: true }])
      expect(keyColumnsProblem(table(over), ['id', 'at'])).toBe(
        "its primary key names a column the table does not have (part); set the key again (PATCH the source's tables[].primary_key) or sync it in full",
      );
    expect(keyColumnsProblem(table({}), ['at'])).toMatch(/names columns the table does not have \(id, part\)/);
    expect(() => checkKeyColumns(table({}), ['at'])).toThrow(/primary key names columns/);
  });

  it('leaves alone a full table, and a key whose columns are all there', () => {
    expect(keyColumnsProblem(table({ mode: 'full' }), [])).toBeUndefined();
    expect(keyColumnsProblem(table({}), ['part', 'id', 'at'])).toBeUndefined();
    expect(keyColumnsProblem(table({ primaryKey: [] }), ['at'])).toBeUndefined();
  });
});
