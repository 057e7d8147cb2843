/**
 * DuckDB's types and DuckLake's names for them ("Data Types" in the DuckLake specification): the catalog records a
 * column's DuckLake type; a reader casts it back to the DuckDB type it queries with.
 */
const DUCKLAKE_OF: Readonly<Record<string, string>> = {
  BOOLEAN: 'boolean',
  TINYINT: 'int8',
  SMALLINT: 'int16',
  INTEGER: 'int32',
  BIGINT: 'int64',
  UTINYINT: 'uint8',
  USMALLINT: 'uint16',
  UINTEGER: 'uint32',
  UBIGINT: 'uint64',
  HUGEINT: 'int128',
  UHUGEINT: 'uint128',
  FLOAT: 'float32',
  DOUBLE: 'float64',
  TIME: 'time',
  'TIME WITH TIME ZONE': 'timetz',
  DATE: 'date',
  TIMESTAMP: 'timestamp',
  'TIMESTAMP WITH TIME ZONE': 'timestamptz',
  TIMESTAMP_S: 'timestamp_s',
  TIMESTAMP_MS: 'timestamp_ms',
  TIMESTAMP_NS: 'timestamp_ns',
  INTERVAL: 'interval',
  VARCHAR: 'varchar',
  BLOB: 'blob',
  JSON: 'json',
  UUID: 'uuid',
};

const DUCKDB_OF: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(DUCKLAKE_OF).map(([duckdb, ducklake]) => [ducklake, duckdb]),
);

const DECIMAL = /^DECIMAL\((\d+),\s*(\d+)\)$/i;

export class UnsupportedTypeError extends Error {}

/** The DuckLake type of a DuckDB column type; nested types are not recorded yet and are refused by name. */
export function ducklakeType(duckdbType: string): string {
  const decimal = DECIMAL.exec(duckdbType);
  if (decimal) return `decimal(${decimal[1]},${decimal[2]})`;
  const known = DUCKLAKE_OF[duckdbType.toUpperCase()];
  if (!known) throw new UnsupportedTypeError(`DuckLake has no type lake records for ${duckdbType} yet.`);
  return known;
}

/** The DuckDB type to read a DuckLake column as. */
export function duckdbType(ducklake: string): string {
  const decimal = DECIMAL.exec(ducklake);
  if (decimal) return `DECIMAL(${decimal[1]},${decimal[2]})`;
  const known = DUCKDB_OF[ducklake.toLowerCase()];
  if (!known) throw new UnsupportedTypeError(`DuckLake type ${ducklake} has no DuckDB type lake reads it as yet.`);
  return known;
}
