import { describe, expect, it } from 'vitest';
import { groupDigits } from '../../src/support/group-digits.js';

describe('groupDigits', () => {
  it("writes every whole number as toLocaleString('en-US') does", () => {
    const samples = [
      0,
      1,
      -1,
      12,
      999,
      1000,
      -1000,
      12_345,
      999_999,
      1_000_000,
      -123_456_789,
      2 ** 53 - 1,
      -(2 ** 53 - 1),
    ];
    for (let n = 1; n < 1e15; n = n * 7 + 3) samples.push(n, -n);
    for (const n of samples) expect(groupDigits(n), String(n)).toBe(n.toLocaleString('en-US'));
  });

  it('leaves fractions, non-finite and unsafe numbers to toLocaleString', () => {
    for (const n of [1.5, -1234.5678, Number.NaN, Infinity, 2 ** 60])
      expect(groupDigits(n)).toBe(n.toLocaleString('en-US'));
  });
});
