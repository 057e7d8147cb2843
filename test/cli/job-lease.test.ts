import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

const SLOW_SQL = 'select max(hash(a.range + b.range)) from range(200000) a, range(100000) b';

describe('no job is left running by a process that died', () => {
  it('a server killed with -9 mid-query: after restart the job is failed with worker_lost', async () => {
    const home = join(tempDir('lake-lease'), 'home');
    const env = { LAKE_HOME: home, LAKE_JOB_LEASE_SECONDS: '1', LAKE_QUERY_TIMEOUT_SECONDS: '120' };
    const first = await startServeProcess(env);
    const token = readFileSync(join(home, 'owner.token'), 'utf8').trim();
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    const submitted = (await (
      await fetch(`${first.url}/queries`, { method: 'POST', headers, body: JSON.stringify({ sql: SLOW_SQL }) })
    ).json()) as { id: string };

    // Alive, the server renews its lease: the job stays running well past one lease.
    await new Promise((r) => setTimeout(r, 2500));
    expect(
      ((await (await fetch(`${first.url}/jobs/${submitted.id}`, { headers })).json()) as { status: string }).status,
    ).toBe('running');

    await first.stop('SIGKILL');
    const second = await startServeProcess(env);
    try {
      let job: { status: string; error: { code: string; message: string } | null } | undefined;
      for (let i = 0; i < 60; i++) {
        job = (await (await fetch(`${second.url}/jobs/${submitted.id}`, { headers })).json()) as typeof job;
        if (job?.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(job).toMatchObject({
        status: 'failed',
        error: { code: 'worker_lost', message: expect.stringMatching(/stopped/) },
      });
      const events = await (await fetch(`${second.url}/jobs/${submitted.id}/events`, { headers })).text();
      expect(events).toContain('event: job.failed');
    } finally {
      await second.stop();
    }
  });
});
