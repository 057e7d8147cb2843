import { describe, expect, it } from 'vitest';
import type { DuckDBIntervalValue } from '@duckdb/node-api';
import { openPrivilegedConnection } from '../../src/service/engine/duckdb.js';
import { intervalToIso, intervalToIsoSql } from '../../src/service/engine/json-values.js';

describe('an INTERVAL as ISO 8601 text', () => {
  it('is the same text in SQL (how a result file keeps it) as in JSON, for negative, mixed and huge values', async () => {
    const values = [
      "INTERVAL '-1 month -2 days -03:04:05.123456'",
      "INTERVAL '1 year 2 months 3 days 04:05:06.5'",
      "INTERVAL '178000000 years'",
      "-INTERVAL '178000000 years' - to_days(2147483647)",
      "INTERVAL '100 hours'",
      "INTERVAL '-0.000001 seconds'",
      "INTERVAL '0'",
      "INTERVAL '-14 months 40 days'",
      'to_microseconds(9223372036854775807)',
      'NULL::INTERVAL',
    ];
    const duck = await openPrivilegedConnection({});
    try {
      const rows = (
        await duck.connection.runAndReadAll(
          `SELECT iv, ${intervalToIsoSql('iv')} AS text FROM (VALUES ${values.map((v) => `(${v})`).join(', ')}) t(iv)`,
        )
      ).getRowObjectsJS() as { iv: DuckDBIntervalValue | null; text: string | null }[];
      expect(rows).toHaveLength(values.length);
      for (const row of rows) expect(row.text).toBe(row.iv === null ? null : intervalToIso(row.iv));
      expect(rows[0]?.text).toBe('P-1M-2DT-3H-4M-5.123456S');
      expect(rows[6]?.text).toBe('PT0S');
    } finally {
      duck.close();
    }
  });
});
