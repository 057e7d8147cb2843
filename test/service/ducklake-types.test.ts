import { describe, expect, it } from 'vitest';
import { columnShape, duckdbTypeOf, UnsupportedTypeError } from '../../src/service/storage/ducklake/types.js';

describe('DuckDB types as the DuckLake catalog records them', () => {
  it('every scalar type lake stores has the name the v1.5 extension gives it, and reads back as itself', () => {
    const cases: [string, string][] = [
      ['BOOLEAN', 'boolean'],
      ['TINYINT', 'int8'],
      ['SMALLINT', 'int16'],
      ['INTEGER', 'int32'],
      ['BIGINT', 'int64'],
      ['HUGEINT', 'int128'],
      ['UBIGINT', 'uint64'],
      ['FLOAT', 'float32'],
      ['DOUBLE', 'float64'],
      ['DECIMAL(38,10)', 'decimal(38,10)'],
      ['DATE', 'date'],
      ['TIME', 'time'],
      ['TIME WITH TIME ZONE', 'timetz'],
      ['TIMESTAMP', 'timestamp'],
      ['TIMESTAMP WITH TIME ZONE', 'timestamptz'],
      ['TIMESTAMP_NS', 'timestamp_ns'],
      ['INTERVAL', 'interval'],
      ['VARCHAR', 'varchar'],
      ['BLOB', 'blob'],
      ['UUID', 'uuid'],
      ['JSON', 'json'],
    ];
    for (const [duckdb, ducklake] of cases) {
      const shape = columnShape('c', duckdb, true);
      expect(shape.type, duckdb).toBe(ducklake);
      expect(duckdbTypeOf(shape)).toBe(duckdb);
    }
  });

  it('nested types become columns with children (element; fields; key and value) and read back whole', () => {
    const cases = [
      'INTEGER[]',
      'VARCHAR[][]',
      'STRUCT("a b" INTEGER, "c" VARCHAR[])',
      'MAP(VARCHAR, STRUCT("x" DOUBLE, "y,z" DECIMAL(10,2)))',
      'STRUCT("q""uote" BIGINT)[]',
    ];
    for (const duckdb of cases) expect(duckdbTypeOf(columnShape('c', duckdb, true)), duckdb).toBe(duckdb);
    expect(columnShape('tags', 'VARCHAR[]', false)).toEqual({
      name: 'tags',
      type: 'list',
      nullable: false,
      children: [{ name: 'element', type: 'varchar', nullable: true }],
    });
    // A fixed-size array is a list to DuckLake.
    expect(duckdbTypeOf(columnShape('c', 'INTEGER[3]', true))).toBe('INTEGER[]');
  });

  it('an ENUM is kept as its labels (DuckLake has no enum) with its type as a tag; what DuckLake cannot hold is refused by name', () => {
    const mood = columnShape('mood', "ENUM('sad', 'ok, fine')", true);
    expect(mood.type).toBe('varchar');
    // Kept beside it (the column tag lake.type), so lake reads it back as the ENUM it was.
    expect(duckdbTypeOf(mood)).toBe("ENUM('sad', 'ok, fine')");
    expect(() => columnShape('u', 'UNION(a INTEGER, b VARCHAR)', true)).toThrow(UnsupportedTypeError);
    expect(() => columnShape('b', 'BIT', true)).toThrow(/cannot hold BIT \(column b\)/);
  });
});
