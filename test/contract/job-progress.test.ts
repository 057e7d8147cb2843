import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';

/** docs/api.md promises `job.progress` for queries that run over a second; the CLI's spinner listens for it. */
describe.each(TRANSPORTS)('job.progress over $name', (transport) => {
  let api: Harness;
  beforeAll(async () => {
    api = await transport.start();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('is emitted, with a percent, while a query runs longer than a second', async () => {
    const sql = 'select count(*) as n from range(3000000000) t(i) where i % 7 = 3';
    const posted = (await (await api.request('/queries', { method: 'POST', body: JSON.stringify({ sql }), headers: { 'Content-Type': 'application/json' } })).json()) as { id: string };
    const deadline = Date.now() + 20_000;
    let progress: { status: string; percent: number }[] = [];
    while (Date.now() < deadline && progress.length === 0) {
      await new Promise((r) => setTimeout(r, 250));
      progress = api.services.jobs.store.events(posted.id, 0).filter((e) => e.type === 'job.progress').map((e) => e.data as { status: string; percent: number });
    }
    await api.request(`/jobs/${posted.id}/cancel`, { method: 'POST' });
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toMatchObject({ status: 'running', percent: expect.any(Number) });
    expect(progress[0]!.percent).toBeGreaterThanOrEqual(0);
    expect(progress[0]!.percent).toBeLessThanOrEqual(100);
  }, 40_000);
});
