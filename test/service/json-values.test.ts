import { describe, expect, it } from 'vitest';
import { intervalToIso } from '../../src/service/engine/json-values.js';

describe('interval as ISO 8601 duration', () => {
  const iso = (months: number, days: number, micros: bigint): string =>
    intervalToIso({ months, days, micros } as never);
  it('writes each part that is set', () => {
    expect(iso(14, 3, 3_723_500_000n)).toBe('P1Y2M3DT1H2M3.5S');
    expect(iso(0, 0, 0n)).toBe('PT0S');
    expect(iso(0, 0, 1n)).toBe('PT0.000001S');
    expect(iso(0, -2, -90_000_000n)).toBe('P-2DT-1M-30S');
  });
});

describe('timestamps as ISO 8601', () => {
  it("agree with DuckDB's own text for every kind of instant", async () => {
    const { openPrivilegedConnection } = await import('../../src/service/engine/duckdb.js');
    const { converterFor } = await import('../../src/service/engine/json-values.js');
    const { connection, close } = await openPrivilegedConnection();
    try {
      const literals = [
        '1970-01-01 00:00:00',
        '1969-12-31 23:59:59.999999',
        '1969-12-31 23:59:59.5',
        '0001-01-01 00:00:00',
        '9999-12-31 23:59:59.999999',
        '2024-02-29 12:00:00.000001',
        '2024-01-02 03:04:05.12',
        '1900-03-01 00:00:00.1',
        '2262-04-11 23:47:16.854775',
      ];
      const reader = await connection.runAndReadAll(
        `SELECT t::TIMESTAMP AS ts, t::TIMESTAMPTZ AS tz FROM (VALUES ${literals.map((l) => `('${l}')`).join(', ')}) v(t)`,
      );
      const [tsType, tzType] = reader.columnTypes();
      const toTs = converterFor(tsType as never);
      const toTz = converterFor(tzType as never);
      for (const [ts, tz] of reader.getRows()) {
        expect(toTs(ts as never)).toBe(String(ts).replace(' ', 'T'));
        expect(toTz(tz as never)).toBe(String(tz).replace(' ', 'T').replace(/\+00$/, 'Z'));
      }
    } finally {
      close();
    }
  });
});
