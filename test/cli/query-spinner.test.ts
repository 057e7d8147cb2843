import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { SLOW_SQL, submitOk } from '../helpers/queries.js';
import { captureStreams } from '../helpers/streams.js';
import { tempDir } from '../helpers/temp.js';
import { overHttp, type Harness } from '../helpers/transports.js';
import { waitFor } from '../helpers/wait-for.js';

describe('lake query on a terminal, against a busy lake serve', () => {
  let api: Harness | undefined;
  afterEach(async () => {
    await api?.close();
    api = undefined;
  });

  it('shows the spinner from the moment it submits, and says when the query is queued', async () => {
    api = await overHttp.start({
      services: {
        workerPool: {
          workers: 2,
          workersPerOrganization: 1,
          killGraceMs: 1000,
          recycleAfterQueries: 500,
          recycleGrowthBytes: 512 * 2 ** 20,
          memoryCgroups: true,
        },
        querySettings: { timeoutMs: 60_000, memoryLimit: '256MB' } as never,
      },
    });
    // The organization's one worker is busy: the next query waits.
    const busy = await submitOk(api, SLOW_SQL);
    const { io, out, err } = captureStreams(true);
    const home = tempDir('lake-spinner');
    const env = { HOME: home, LAKE_CONFIG_DIR: home };
    const exit = main(
      ['node', 'lake', '--base-url', api.baseUrl, '--token', api.home.ownerToken, 'query', 'select 41 + 1 as answer'],
      io,
      env,
    );
    await waitFor(
      () => err.text,
      (text) => /queued qr_/.test(text),
      5000,
    );
    expect(err.text).toMatch(/submitting/);
    expect(err.text).toMatch(/queued qr_\w+ \(waiting for a free worker\)/);
    await api.request(`/jobs/${busy.id}/cancel`, { method: 'POST' });
    expect(await exit).toBe(0);
    expect(out.text).toContain('42');
  });
});
