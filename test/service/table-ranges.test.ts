import { describe, expect, it } from 'vitest';
import { MIN_RANGE_BYTES, RangeBoard, RangeRead, rangeConditions } from '../../src/service/syncs/table-ranges.js';

describe('splitting a table into block ranges', () => {
  it('leaves small tables whole and never makes more ranges than connections', () => {
    expect(rangeConditions(MIN_RANGE_BYTES * 2 - 1, 8192, 4)).toEqual(['']);
    expect(rangeConditions(MIN_RANGE_BYTES * 10, 8192, 1)).toEqual(['']);
    expect(rangeConditions(MIN_RANGE_BYTES * 10, 8192, 3)).toHaveLength(3);
    expect(rangeConditions(MIN_RANGE_BYTES * 2, 8192, 3)).toHaveLength(2);
  });

  it('covers every block exactly once, open at both ends', () => {
    const blocks = (MIN_RANGE_BYTES * 3) / 8192;
    const ranges = rangeConditions(MIN_RANGE_BYTES * 3, 8192, 3);
    expect(ranges).toEqual([
      `ctid < '(${blocks / 3},0)'::tid`,
      `ctid >= '(${blocks / 3},0)'::tid AND ctid < '(${(2 * blocks) / 3},0)'::tid`,
      `ctid >= '(${(2 * blocks) / 3},0)'::tid`,
    ]);
  });
});

describe("the board of ranges shared by a sync's connections", () => {
  it('gives each range to one connection only, and tells its owner how the read went', async () => {
    const board = new RangeBoard();
    const reads = [
      new RangeRead(async () => true),
      new RangeRead(async () => {
        throw new Error('lost');
      }),
      new RangeRead(async () => true),
    ];
    board.offer(reads);
    // The owner claims one itself: the board skips it.
    expect(reads[0]?.claim()).toBe(true);
    const taken = board.take();
    expect(taken).toBe(reads[1]);
    expect(reads[1]?.claim()).toBe(false);
    expect(board.take()).toBe(reads[2]);
    expect(board.take()).toBeUndefined();
    const client = {} as import('pg').Client;
    await Promise.all(reads.map((r) => r.run(client)));
    expect(await Promise.all(reads.map((r) => r.done))).toEqual([true, false, true]);
  });
});
