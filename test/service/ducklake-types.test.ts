import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPrivilegedConnection } from '../../src/service/engine/duckdb.js';
import type { CatalogColumn } from '../../src/service/storage/ducklake/catalog-types.js';
import { describeDataFile, storedRowsSql, tableRowsSql } from '../../src/service/storage/ducklake/data-files.js';
import {
  columnShape,
  duckdbTypeOf,
  isTaggedType,
  storedTypeOf,
  UnsupportedTypeError,
} from '../../src/service/storage/ducklake/types.js';

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

  it('an INTERVAL is stored as its signed months, days and microseconds (Parquet has no negative interval) and read back as one', async () => {
    const shape = columnShape('iv', 'INTERVAL', true);
    // What any DuckLake reader finds: a struct of three integers; lake's tag makes it an INTERVAL again.
    expect(shape).toEqual({
      name: 'iv',
      type: 'struct',
      nullable: true,
      lakeType: 'INTERVAL',
      children: [
        { name: 'months', type: 'int32', nullable: true },
        { name: 'days', type: 'int32', nullable: true },
        { name: 'micros', type: 'int64', nullable: true },
      ],
    });
    expect(duckdbTypeOf(shape)).toBe('INTERVAL');
    expect(storedTypeOf(shape)).toBe('STRUCT(months INTEGER, days INTEGER, micros BIGINT)');
    // Inside a list an interval stays what the file holds.
    expect(duckdbTypeOf(columnShape('ivs', 'INTERVAL[]', true))).toBe('INTERVAL[]');

    const dir = mkdtempSync(join(tmpdir(), 'lake-interval-'));
    const duck = await openPrivilegedConnection({});
    try {
      const column: CatalogColumn = {
        ...shape,
        id: 1,
        children: (shape.children ?? []).map((c, i) => ({ ...c, children: undefined, id: i + 2 })),
      };
      const values = [
        "INTERVAL '-1 month -2 days -03:04:05.123456'",
        "INTERVAL '178000000 years'",
        "-INTERVAL '178000000 years' - to_days(2147483647)",
        "INTERVAL '100 hours'",
        'NULL',
        "INTERVAL '0'",
      ];
      const rows = `SELECT * FROM (VALUES ${values.map((v, i) => `(${i}, ${v})`).join(', ')}) t(n, iv)`;
      const file = join(dir, 'part-0.parquet');
      await duck.connection.run(
        `COPY (SELECT iv FROM (${storedRowsSql([column], rows)}) ORDER BY n) TO '${file}' (FORMAT parquet, FIELD_IDS {'iv': {__duckdb_field_id: 1, 'months': 2, 'days': 3, 'micros': 4}})`,
      );
      const read = tableRowsSql(
        [{ path: 'part-0.parquet', mappingId: null, dataFileId: 1, recordCount: 6, deletePath: null }],
        [column],
        (p) => join(dir, p),
      );
      const back = await duck.connection.runAndReadAll(
        `SELECT list(iv::VARCHAR) AS back, list(x::VARCHAR ORDER BY n) AS expected FROM (SELECT iv, row_number() OVER () - 1 AS n FROM (${read})) r JOIN (SELECT n, iv AS x FROM (${rows})) e USING (n)`,
      );
      const [row] = back.getRowObjectsJS() as { back: unknown; expected: unknown }[];
      expect(JSON.stringify(row?.back)).toBe(JSON.stringify(row?.expected));
    } finally {
      duck.close();
      rmSync(dir, { recursive: true, force: true });
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

  it('a BIGNUM is kept as its digits and a collated text as text, each with its type as a tag, and both read back as they were', async () => {
    const wide = columnShape('w', 'BIGNUM', true);
    const folded = columnShape('ci', 'VARCHAR COLLATE NOCASE', true);
    expect([wide.type, wide.lakeType, storedTypeOf(wide)]).toEqual(['varchar', 'BIGNUM', 'VARCHAR']);
    expect([folded.type, folded.lakeType, storedTypeOf(folded)]).toEqual([
      'varchar',
      'VARCHAR COLLATE NOCASE',
      'VARCHAR',
    ]);
    expect(duckdbTypeOf(folded)).toBe('VARCHAR COLLATE NOCASE');
    expect([isTaggedType('VARCHAR COLLATE NOCASE'), isTaggedType('BIGNUM'), isTaggedType('VARCHAR')]).toEqual([
      true,
      true,
      false,
    ]);
    expect(isTaggedType('TIMESTAMPTZ')).toBe(false);

    const dir = mkdtempSync(join(tmpdir(), 'lake-tagged-'));
    const duck = await openPrivilegedConnection({});
    try {
      // Both flat: no children to number.
      const columns: CatalogColumn[] = [
        { ...wide, children: undefined, id: 1 },
        { ...folded, children: undefined, id: 2 },
      ];
      const rows = `SELECT * FROM (VALUES ('-123456789012345678901234567890123456789012345'::BIGNUM, 'Ab'), (NULL, 'aB'), ('7'::BIGNUM, NULL), ('10'::BIGNUM, 'x')) t(w, ci)`;
      const file = join(dir, 'part-0.parquet');
      await duck.connection.run(
        `COPY (${storedRowsSql(columns, rows)}) TO '${file}' (FORMAT parquet, FIELD_IDS {'w': {__duckdb_field_id: 1}, 'ci': {__duckdb_field_id: 2}})`,
      );
      const read = tableRowsSql(
        [{ path: 'part-0.parquet', mappingId: null, dataFileId: 1, recordCount: 4, deletePath: null }],
        columns,
        (p) => join(dir, p),
      );
      const back = await duck.connection.runAndReadAll(
        `SELECT min(w)::VARCHAR AS least, sum(w)::VARCHAR AS total, typeof(any_value(w)) AS t,
           count(*) FILTER (WHERE ci = 'AB') AS folded FROM (${read})`,
      );
      expect(back.getRowObjectsJS()).toEqual([
        {
          least: '-123456789012345678901234567890123456789012345',
          total: '-123456789012345678901234567890123456789012328',
          t: 'BIGNUM',
          folded: 2n,
        },
      ]);
      // The catalog's statistics are in its own type's terms (text), what another DuckLake reader prunes by.
      const stats = (await describeDataFile(duck.connection, file, 'part-0.parquet', columns)).columnStats;
      expect(stats?.map((c) => [c.min, c.max])).toEqual([
        ['-123456789012345678901234567890123456789012345', '7'],
        ['Ab', 'x'],
      ]);
    } finally {
      duck.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
