import { describe, expect, it } from 'vitest';
import { intervalToIso } from '../../src/service/engine/json-values.js';

describe('interval as ISO 8601 duration', () => {
  const iso = (months: number, days: number, micros: bigint): string => intervalToIso({ months, days, micros } as never);
  it('writes each part that is set', () => {
    expect(iso(14, 3, 3_723_500_000n)).toBe('P1Y2M3DT1H2M3.5S');
    expect(iso(0, 0, 0n)).toBe('PT0S');
    expect(iso(0, 0, 1n)).toBe('PT0.000001S');
    expect(iso(0, -2, -90_000_000n)).toBe('P-2DT-1M-30S');
  });
});
