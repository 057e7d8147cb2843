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

  it("agree with DuckDB's text for random instants of years 1 to 9999, rows of one day and the days around the epoch", async () => {
    const { openPrivilegedConnection } = await import('../../src/service/engine/duckdb.js');
    const { converterFor } = await import('../../src/service/engine/json-values.js');
    const { connection, close } = await openPrivilegedConnection();
    try {
      const first = -62_135_596_800_000_000;
      const last = 253_402_300_799_999_999;
      let seed = 7;
      const random = (): number => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
      const micros: bigint[] = [];
      for (let i = 0; i < 4000; i++) micros.push(BigInt(Math.floor(first + random() * (last - first))));
      // Consecutive values of one day (the cached day), across a midnight, and whole seconds, tenths, single micros.
      for (let i = 0; i < 500; i++) micros.push(1_700_000_000_000_000n + BigInt(i) * 999_999_937n);
      for (const base of [0n, -86_400_000_000n, 86_400_000_000n * 20_000n, -(2n ** 53n), 2n ** 53n])
        for (const step of [-1_000_001n, -1n, 0n, 1n, 100_000n, 1_000_000n, 59_999_999n])
          micros.push(base + step, base - step * 3n);
      // Midnights across the range a double holds exactly, and the microseconds either side of each.
      for (let i = 0; i < 300; i++) {
        const midnight = BigInt(Math.floor((random() - 0.5) * 2 * 104_249)) * 86_400_000_000n;
        micros.push(midnight - 1n, midnight, midnight + 1n);
      }
      micros.push(BigInt(first), BigInt(last), 2n ** 53n + 1n, -(2n ** 53n) - 1n);
      const reader = await connection.runAndReadAll(
        `SELECT make_timestamp(m) AS ts, make_timestamp(m)::VARCHAR AS text FROM unnest([${micros.join(', ')}]::BIGINT[]) u(m)`,
      );
      const toTs = converterFor(reader.columnTypes()[0] as never);
      const rows = reader.getRows();
      expect(rows).toHaveLength(micros.length);
      for (const [ts, text] of rows) expect(toTs(ts as never)).toBe(String(text).replace(' ', 'T'));
    } finally {
      close();
    }
  });
});
