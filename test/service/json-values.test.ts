import type { DuckDBConnection } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { openPrivilegedConnection } from '../../src/service/engine/duckdb.js';
import { converterFor, intervalToIso, vectorConverterFor } from '../../src/service/engine/json-values.js';

/** Runs `check` on a DuckDB connection of lake's own, closed after. */
async function onConnection(check: (connection: DuckDBConnection) => Promise<void>): Promise<void> {
  const { connection, close } = await openPrivilegedConnection();
  try {
    await check(connection);
  } finally {
    close();
  }
}

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
    await onConnection(async (connection) => {
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
    });
  });

  it("agree with DuckDB's text for random instants of years 1 to 9999, rows of one day and the days around the epoch", async () => {
    await onConnection(async (connection) => {
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
    });
  });

  it('every precision agrees with DuckDB, before year 1 and after 9999 too (year 1 BC included)', async () => {
    await onConnection(async (connection) => {
      const instants = [
        ...[1, 2, 366, 367, 400, 1000, 100_000, 3_000_000].map(
          (d) => `TIMESTAMP '0001-01-01 10:11:12.5' - to_days(${d})`,
        ),
        ...[1, 400, 100_000].map((d) => `TIMESTAMP '9999-12-31 23:59:59.999' + to_days(${d})`),
        "TIMESTAMP '1970-01-01 00:00:00.123'",
        "TIMESTAMP '1969-12-31 23:59:59.999'",
      ];
      const reader = await connection.runAndReadAll(
        `SELECT x AS us, x::TIMESTAMP_MS AS ms, x::TIMESTAMP_S AS s, x::TIMESTAMPTZ AS tz,
                x::VARCHAR, x::TIMESTAMP_MS::VARCHAR, x::TIMESTAMP_S::VARCHAR, x::TIMESTAMPTZ::VARCHAR
           FROM (VALUES ${instants.map((i) => `(${i})`).join(', ')}) v(x)`,
      );
      const converters = reader
        .columnTypes()
        .slice(0, 4)
        .map((type) => converterFor(type as never));
      const rows = reader.getRows();
      expect(rows).toHaveLength(instants.length);
      for (const row of rows)
        converters.forEach((convert, i) =>
          expect(convert(row[i] as never)).toBe(
            String(row[i + 4])
              .replace(' ', 'T')
              .replace(/\+00$/, 'Z'),
          ),
        );
    });
  });
});

describe('dates and decimals as text', () => {
  it("agree with DuckDB's text for random days of every year, the calendar's edges and BC", async () => {
    await onConnection(async (connection) => {
      let seed = 11;
      const random = (): number => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
      const days: number[] = [];
      for (let i = 0; i < 4000; i++) days.push(Math.floor(-719_162 + random() * (2_932_896 + 719_162 + 1)));
      // Every day of four years around leap days of each kind (1900 is not one, 2000 is), the range's ends and past.
      for (const year of [1600, 1899, 1900, 1999, 2000, 2023, 2024]) {
        const start = Math.round((Date.UTC(year, 0, 1) - Date.UTC(1970, 0, 1)) / 86_400_000);
        for (let d = -2; d < 368; d++) days.push(start + d);
      }
      days.push(-719_163, -719_162, 2_932_896, 2_932_897, 0, -1, -800_000, 5_000_000);
      const reader = await connection.runAndReadAll(
        `SELECT (DATE '1970-01-01' + d) AS day, (DATE '1970-01-01' + d)::VARCHAR AS text FROM unnest([${days.join(', ')}]::INTEGER[]) u(d)`,
      );
      const toDate = converterFor(reader.columnTypes()[0] as never);
      const rows = reader.getRows();
      expect(rows).toHaveLength(days.length);
      for (const [day, text] of rows) expect(toDate(day as never)).toBe(String(text));
    });
  });

  it("agree with DuckDB's text for DECIMALs of every width and scale, signs, zeros and the largest", async () => {
    await onConnection(async (connection) => {
      let seed = 5;
      const random = (): number => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
      for (const [width, scale] of [
        [4, 0],
        [4, 2],
        [9, 4],
        [12, 2],
        [15, 15],
        [18, 0],
        [18, 3],
        [18, 17],
        [38, 10],
        [38, 37],
      ] as const) {
        const digits = (n: number): string =>
          Array.from({ length: n }, (_, i) =>
            i === 0 ? 1 + Math.floor(random() * 9) : Math.floor(random() * 10),
          ).join('');
        const scaled: string[] = [
          '0',
          '1',
          '-1',
          '9'.repeat(width),
          `-${'9'.repeat(width)}`,
          (10n ** BigInt(Math.min(scale, width - 1))).toString(),
        ];
        for (let i = 0; i < 200; i++)
          scaled.push(`${random() < 0.5 ? '-' : ''}${digits(1 + Math.floor(random() * width))}`);
        // Around 2^53, where the exact double ends.
        for (const edge of [2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n])
          if (edge.toString().length <= width) scaled.push(edge.toString(), `-${edge}`);
        const type = `DECIMAL(${width}, ${scale})`;
        // The scaled integer's digits with the point put in: CAST('-1234' AS DECIMAL(6, 2)) would be -1234.00.
        const literal = (digitsText: string): string => {
          const negative = digitsText.startsWith('-');
          const bare = (negative ? digitsText.slice(1) : digitsText).padStart(scale + 1, '0');
          const text = scale === 0 ? bare : `${bare.slice(0, bare.length - scale)}.${bare.slice(bare.length - scale)}`;
          return `${negative ? '-' : ''}${text}`;
        };
        const reader = await connection.runAndReadAll(
          `SELECT x, x::VARCHAR FROM (SELECT CAST(s AS ${type}) AS x FROM unnest([${scaled.map((v) => `'${literal(v)}'`).join(', ')}]) u(s))`,
        );
        const toDecimal = converterFor(reader.columnTypes()[0] as never);
        const rows = reader.getRows();
        expect(rows.length).toBe(scaled.length);
        // DuckDB writes a DECIMAL whose scale is its width without the whole part's 0 (".500"); lake keeps it ("0.500").
        for (const [value, text] of rows)
          expect(toDecimal(value as never)).toBe(String(text).replace(/^(-?)\./, '$10.'));
      }
    });
  });

  it("TIME agrees with DuckDB's text from midnight to 24:00:00", async () => {
    await onConnection(async (connection) => {
      let seed = 3;
      const random = (): number => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
      const micros = [0, 1, 999_999, 1_000_000, 500_000, 59_999_999, 3_600_000_000, 86_399_999_999, 86_400_000_000];
      for (let i = 0; i < 2000; i++) micros.push(Math.floor(random() * 86_400_000_000));
      for (let i = 0; i < 200; i++) micros.push(Math.floor(random() * 86_400) * 1_000_000);
      const reader = await connection.runAndReadAll(
        `SELECT t, t::VARCHAR FROM (SELECT CASE WHEN m = 86400000000 THEN TIME '24:00:00' ELSE TIME '00:00:00' + to_microseconds(m) END AS t FROM unnest([${micros.join(', ')}]::BIGINT[]) u(m))`,
      );
      const toTime = converterFor(reader.columnTypes()[0] as never);
      const rows = reader.getRows();
      expect(rows).toHaveLength(micros.length);
      for (const [time, text] of rows) expect(toTime(time as never)).toBe(String(text));
    });
  });

  it('columns of dates and timestamps of other days, side by side in each row, each keep their own day', async () => {
    await onConnection(async (connection) => {
      const result = await connection.run(
        `SELECT DATE '2024-01-01' + (i % 3)::INTEGER AS a, DATE '1999-12-31' - (i // 2)::INTEGER AS b,
                TIMESTAMP '2024-01-01 10:00:00' + to_hours(i * 7) AS c, TIMESTAMP '0001-01-01 00:00:01' - to_days(i) AS d,
                a::VARCHAR, b::VARCHAR, c::VARCHAR, d::VARCHAR
           FROM range(200) t(i)`,
      );
      const converters = result
        .columnTypes()
        .slice(0, 4)
        .map((type) => vectorConverterFor(type as never));
      let rows = 0;
      for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk())
        for (let row = 0; row < chunk.rowCount; row++, rows++)
          converters.forEach((convert, c) =>
            expect(convert(chunk.getColumnVector(c), row)).toBe(
              String(chunk.getColumnVector(c + 4).getItem(row)).replace(' ', 'T'),
            ),
          );
      expect(rows).toBe(200);
    });
  });
});
