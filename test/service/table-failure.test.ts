import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedTable, failureReason, INTERNAL_SYNC_FAILURE } from '../../src/service/syncs/table-failure.js';
import { failedTablesText } from '../../src/service/syncs/pg-reads.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/** Why a sync's table failed, as its tenant reads it: the source's errors said plainly, lake's own never quoted. */
describe('why a table failed', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await inMemory.start();
  });
  afterAll(async () => {
    await api.close();
  });

  const syncOf = (reported: Error[], aborted = false) => {
    const controller = new AbortController();
    if (aborted) controller.abort();
    return {
      signal: controller.signal,
      settings: { config: { host: 'db.internal', user: 'etl' }, secrets: { password: 's3cret-pw' }, tables: [] },
      lake: api.services.lake,
      reportInternal: (error: Error) => reported.push(error),
    };
  };

  it("says an error of lake's own code as such and reports it to the log, never quoting it to the tenant", () => {
    const reported: Error[] = [];
    const bug = new TypeError("Cannot read properties of undefined (reading 'select')");
    expect(failureReason(bug, syncOf(reported))).toBe(INTERNAL_SYNC_FAILURE);
    const missing = new ReferenceError('plans is not defined');
    expect(failureReason(missing, syncOf(reported))).toBe(INTERNAL_SYNC_FAILURE);
    expect(reported).toEqual([bug, missing]);
    expect(INTERNAL_SYNC_FAILURE).not.toMatch(/undefined|select/);
  });

  it("says the source's errors as they are, without its host, user or password, and a cancelled sync as cancelled", () => {
    const reported: Error[] = [];
    expect(
      failureReason(
        new Error('password authentication failed for user etl at db.internal (s3cret-pw)'),
        syncOf(reported),
      ),
    ).toBe('password authentication failed for user <user> at <host> (<password>)');
    expect(failureReason(new RangeError('Invalid string length'), syncOf(reported))).toBe('Invalid string length');
    expect(failureReason(new TypeError('x'), syncOf(reported, true))).toBe('cancelled');
    expect(reported).toEqual([]);
  });
});

describe('what a sync says of many failed tables', () => {
  it("names at most ten failed tables in the sync's message, each reason at most 1,000 characters", () => {
    const failed = Array.from({ length: 2000 }, (_, i) => ({ key: `public.t${i}`, reason: 'permission denied' }));
    const text = failedTablesText(failed);
    expect(text).toBe(
      `${failed
        .slice(0, 10)
        .map((f) => `${f.key} (permission denied)`)
        .join('; ')}; and 1990 more tables`,
    );
    expect(failedTablesText(failed.slice(0, 2))).toBe('public.t0 (permission denied); public.t1 (permission denied)');
    // A reason lake wrote from what the source holds (its column names) is cut like a source's own message.
    const columns = Array.from({ length: 20_000 }, (_, i) => `column_${i}`).join(', ');
    const reported: string[] = [];
    const reporter = {
      phase: (_task: unknown, _phase: string, info: { error?: string }) => reported.push(info.error ?? ''),
    };
    const result = failedTable(
      reporter as never,
      { key: 'public.wide' } as never,
      `cdc cannot read spatial columns (${columns})`,
      undefined,
    );
    expect(result.error?.length).toBe(1001);
    expect(reported[0]).toBe(result.error);
  });
});
