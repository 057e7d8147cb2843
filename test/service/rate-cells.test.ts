import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/service/core/clock.js';
import { StoredRateCells } from '../../src/service/limits/rate-cell-store.js';
import { MemoryRateCells, RateLimiter, type RateCells } from '../../src/service/limits/rate-limiter.js';
import { openMetadataDb } from '../../src/service/store/database.js';
import type { MetadataDb } from '../../src/service/store/metadata-db.js';
import { createMetadataDatabase } from '../helpers/postgres.js';

/** A clock that stands still unless a test moves it: no budget refills while a burst runs. */
function stillClock(start = 1_800_000_000_000): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    sleep: async () => undefined,
    advance: (ms) => void (now += ms),
  };
}

describe('shared rate-limit cells (PostgreSQL)', () => {
  let database: { url: string; drop(): Promise<void> };
  const opened: MetadataDb[] = [];
  const open = async (): Promise<MetadataDb> => {
    const db = await openMetadataDb(database.url);
    opened.push(db);
    return db;
  };

  beforeAll(async () => {
    database = await createMetadataDatabase();
  });
  afterAll(async () => {
    for (const db of opened) await db.close();
    await database?.drop();
  });

  it('admits exactly the budget when many admissions of a new caller race over two connections pools', async () => {
    const clock = stillClock();
    const [one, two] = [await open(), await open()];
    const limiters = [one, two].map(
      (db) => new RateLimiter({ perCaller: 20, perOrganization: 1000 }, clock, new StoredRateCells(db, clock)),
    );
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => limiters[i % 2]!.admit('usr_race', 'org_race')),
    );
    expect(results.filter((r) => r.allowed)).toHaveLength(20);
    // Refused requests spent nothing of the organization's budget: it was charged once per admitted request.
    const next = await limiters[0]!.admit('usr_other', 'org_race');
    expect(next.organization.remaining).toBe(1000 - 20 - 1);
  });

  it("a new caller's burst over three pools, while the organization's cell exists: no deadlock, no error", async () => {
    const clock = stillClock();
    const pools = [await open(), await open(), await open()];
    const limiters = pools.map(
      (db) => new RateLimiter({ perCaller: 120, perOrganization: 60_000 }, clock, new StoredRateCells(db, clock)),
    );
    await limiters[0]!.admit('usr_first', 'org_busy');
    // One request a millisecond: the organization's cell counts exactly (the store keeps whole milliseconds).
    // Row locks taken inside one statement deadlocked here (40P01, a 500 to the caller): one admission held the
    // organization's row and met the new caller's row another had just created and locked.
    for (let round = 0; round < 10; round++) {
      const results = await Promise.all(
        Array.from({ length: 15 }, (_, i) => limiters[i % 3]!.admit(`key_${round}`, 'org_busy')),
      );
      expect(results.every((r) => r.allowed)).toBe(true);
    }
    expect((await limiters[0]!.admit('usr_last', 'org_busy')).organization.remaining).toBe(60_000 - 1 - 150 - 1);
  });

  it('decides as one process would, request by request, refusals and refills included', async () => {
    const clock = stillClock();
    const stored = new RateLimiter(
      { perCaller: 3, perOrganization: 5 },
      clock,
      new StoredRateCells(await open(), clock),
    );
    const memory = new RateLimiter({ perCaller: 3, perOrganization: 5 }, clock, new MemoryRateCells(clock));
    const run = async (cells: RateLimiter) => {
      const seen: unknown[] = [];
      for (const [caller, wait] of [
        ['a', 0],
        ['a', 0],
        ['b', 0],
        ['a', 0],
        ['a', 0],
        ['b', 0],
        ['b', 0],
        ['c', 7_000],
        ['a', 13_000],
        ['a', 0],
        ['c', 0],
      ] as const) {
        clock.advance(wait);
        seen.push(await cells.admit(`usr_${caller}`, 'org_same'));
      }
      return seen;
    };
    const start = clock.now();
    const fromStore = await run(stored);
    clock.advance(start - clock.now());
    expect(fromStore).toEqual(await run(memory));
    expect(fromStore.filter((a) => (a as { allowed: boolean }).allowed).length).toBeGreaterThan(4);
    expect(fromStore.some((a) => !(a as { allowed: boolean }).allowed)).toBe(true);
  });

  it('an admission with both budgets off or one cell works the same', async () => {
    const clock = stillClock();
    const cells: RateCells = new StoredRateCells(await open(), clock);
    const single = new RateLimiter({ perCaller: 2, perOrganization: 0 }, clock, cells);
    const allowed = [];
    for (let i = 0; i < 4; i++) allowed.push((await single.admit('usr_single', undefined)).allowed);
    expect(allowed).toEqual([true, true, false, false]);
    const none = new RateLimiter({ perCaller: 0, perOrganization: 0 }, clock, cells);
    expect((await none.admit('usr_single', 'org_x')).allowed).toBe(true);
  });
});
