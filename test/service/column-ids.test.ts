import { describe, expect, it } from 'vitest';
import { assignColumnIds } from '../../src/service/storage/ducklake/column-ids.js';

/** A table version's column ids: which changes keep a column's id (its earlier files still read) and which do not. */
describe('assigning a table version its column ids', () => {
  const id = { id: 1, name: 'id', type: 'int32', nullable: false };
  const v = { id: 2, name: 'v', type: 'varchar', nullable: false };
  const n = { id: 3, name: 'n', type: 'int64', nullable: true };
  const current = [id, v, n];

  it('keeps every id when nothing changed', () => {
    expect(assignColumnIds(current, 3, current)).toEqual({ columns: current, unchanged: true });
  });

  it('keeps the id of a column that became nullable, and records it nullable', () => {
    const { columns, unchanged } = assignColumnIds(current, 3, [id, { ...v, nullable: true }, n]);
    expect(unchanged).toBe(false);
    expect(columns.map((c) => [c.id, c.nullable])).toEqual([
      [1, false],
      [2, true],
      [3, true],
    ]);
  });

  it('keeps a column made NOT NULL nullable (earlier files may hold NULLs), with its id', () => {
    const { columns, unchanged } = assignColumnIds(current, 3, [id, v, { ...n, nullable: false }]);
    expect(unchanged).toBe(true);
    expect(columns[2]).toEqual(n);
  });

  it('gives a retyped or renamed column a new id, counting on from the highest ever used', () => {
    const { columns } = assignColumnIds(current, 7, [id, { ...v, type: 'int64' }, { ...n, name: 'm' }]);
    expect(columns.map((c) => c.id)).toEqual([1, 8, 9]);
  });
});
