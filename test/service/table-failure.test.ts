import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureReason, INTERNAL_SYNC_FAILURE } from '../../src/service/syncs/table-failure.js';
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
