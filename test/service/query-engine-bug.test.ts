import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { isProgrammingError, programmingErrorFrom } from '../../src/service/core/errors.js';
import { InProcessEngine } from '../../src/service/engine/in-process-engine.js';
import type { QueryJob } from '../../src/service/engine/query-engine.js';
import { INTERNAL_QUERY_FAILURE } from '../../src/service/engine/query-runner.js';
import { tempDir } from '../helpers/temp.js';

/** A query that fails on an error of lake's own code: its caller is told so, the stack goes to the log only. */
describe("a query engine's own bug", () => {
  it('fails the query with a message of its own and hands the stack over for the log, never to the caller', async () => {
    const root = tempDir('lake-engine-bug');
    const catalogFile = join(root, 'catalog.duckdb');
    const instance = await DuckDBInstance.create(catalogFile);
    instance.closeSync();
    const results = join(root, 'results');
    mkdirSync(join(results, 'q1'), { recursive: true });
    const engine = new InProcessEngine({ memoryLimit: '256MB', threads: 1 }, 1);
    const job = (queryId: string, parameters: unknown): QueryJob => ({
      queryId,
      statement: 'select $1 as x',
      catalogFile,
      readableDirs: [root],
      resultDir: join(results, queryId),
      writableDir: results,
      limits: {
        timeoutMs: 10_000,
        maxResultBytes: 1 << 20,
        memoryLimit: '256MB',
        threads: 1,
        resultLimitCode: 'result_too_large',
      },
      parameters: parameters as QueryJob['parameters'],
    });
    // A job lake built wrong (its parameters not a list): a TypeError in lake's code, not the SQL's.
    const outcome = await engine.start(job('q1', 5)).outcome;
    expect(outcome).toMatchObject({ status: 'failed', code: 'query_failed', message: INTERNAL_QUERY_FAILURE });
    expect(outcome.status === 'failed' && outcome.internalError).toMatch(/^TypeError: .*\n\s+at /);
    expect(INTERNAL_QUERY_FAILURE).not.toMatch(/map|function|TypeError/);
    // The SQL's own errors are still said as DuckDB says them, with nothing for the log.
    mkdirSync(join(results, 'q2'), { recursive: true });
    const own = await engine.start({ ...job('q2', []), statement: 'select nosuchcol' }).outcome;
    expect(own).toMatchObject({
      status: 'failed',
      code: 'query_failed',
      message: expect.stringContaining('nosuchcol'),
    });
    expect(own).not.toHaveProperty('internalError');
    await engine.close();
    // The stack, made an error again where the worker's answer arrives, is logged as lake's own error, as it was.
    const again = programmingErrorFrom(String(outcome.status === 'failed' && outcome.internalError));
    expect(isProgrammingError(again)).toBe(true);
    expect(again.stack).toBe(outcome.status === 'failed' ? outcome.internalError : undefined);
  });
});
