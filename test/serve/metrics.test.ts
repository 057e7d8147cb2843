import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

type Json = Record<string, any>;

/** Every sample of a scrape, keyed by name and sorted labels, as numbers. */
function samples(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const family of parsePrometheusTextFormat(text))
    for (const sample of family.metrics) {
      const labels = Object.entries(sample.labels ?? {})
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const value = sample.value ?? sample.count;
      if (value !== undefined) found.set(`${family.name}{${labels}}`, Number(value));
    }
  return found;
}

describe('metrics on LAKE_METRICS_ADDR', () => {
  let server: ServeProcess;
  let token: string;
  let metricsUrl: string;
  beforeAll(async () => {
    const home = join(tempDir('lake-metrics'), 'home');
    server = await startServeProcess({
      LAKE_HOME: home,
      LAKE_METRICS_ADDR: '127.0.0.1:0',
      LAKE_METRICS_ORGANIZATIONS: '1',
    });
    token = readFileSync(join(home, 'owner.token'), 'utf8').trim();
    metricsUrl = String(server.logLines().find((line) => line.msg === 'metrics listening')?.url);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  const api = async (method: string, path: string, body?: unknown, auth = true): Promise<Response> =>
    fetch(`${server.url}${path}`, {
      method,
      headers: {
        ...(auth ? { Authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const ended = async (id: string): Promise<Json> => {
    for (let i = 0; i < 300; i++) {
      const job = (await (await api('GET', `/jobs/${id}`)).json()) as Json;
      if (job.status !== 'queued' && job.status !== 'running') return job;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`job ${id} never ended`);
  };
  const scrape = async (): Promise<string> => {
    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text();
  };

  it('counts a query, a failed query, a limit kill, a sync and a refused request: exactly those', async () => {
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    // The API does not serve them, and the scrape address serves nothing else.
    expect((await api('GET', '/metrics')).status).toBe(404);
    expect((await fetch(metricsUrl.replace('/metrics', '/queries'))).status).toBe(404);
    const beforeText = await scrape();
    const before = samples(beforeText);

    const run = async (body: object): Promise<Json> =>
      ended(((await (await api('POST', '/queries', body)).json()) as Json).id as string);
    expect((await run({ sql: 'select 1 as one' })).status).toBe('succeeded');
    expect((await run({ sql: "select error('boom') as x" })).error.code).toBe('query_failed');
    const killed = await run({
      sql: 'select count(*) from range(1000000000000) t(i) where i % 7 = 3',
      timeout_seconds: 1,
    });
    expect(killed.error.code).toBe('query_timeout');
    const source = (await (await api('POST', '/sources', { connector: 'sample', name: 'Shop' })).json()) as Json;
    const sync = (await (await api('POST', `/sources/${source.id}/sync`, {})).json()) as Json;
    expect((await ended(sync.id as string)).status).toBe('succeeded');
    expect((await api('GET', '/jobs', undefined, false)).status).toBe(401);
    expect((await api('GET', '/jobs/job_nope')).status).toBe(404);

    const afterText = await scrape();
    const after = samples(afterText);
    const moved = (key: string): number => (after.get(key) ?? 0) - (before.get(key) ?? 0);
    expect(moved('lake_queries_total{outcome=succeeded}')).toBe(1);
    expect(moved('lake_queries_total{outcome=query_failed}')).toBe(1);
    expect(moved('lake_queries_total{outcome=query_timeout}')).toBe(1);
    expect(moved('lake_syncs_total{status=succeeded}')).toBe(1);
    expect(moved('lake_sync_rows_total{}')).toBeGreaterThan(0);
    expect(moved('lake_http_requests_total{method=GET,route=/jobs,status=401}')).toBe(1);
    expect(moved('lake_http_requests_total{method=POST,route=/queries,status=202}')).toBe(3);
    // Every error answered, by its code: the refusal and the unknown job, nothing else.
    expect(moved('lake_api_errors_total{code=authentication_required}')).toBe(1);
    expect(moved('lake_api_errors_total{code=job_not_found}')).toBe(1);
    expect([...after.keys()].filter((key) => key.startsWith('lake_api_errors_total') && moved(key) !== 0)).toHaveLength(
      2,
    );
    // The parser keeps no labels of histogram samples: their counts are read from the text.
    const counted = (text: string): number =>
      Number(/lake_http_request_duration_seconds_count\{route="\/queries",method="POST"\} (\d+)/.exec(text)?.[1] ?? 0);
    expect(counted(afterText) - counted(beforeText)).toBe(3);
    // Each query that started was timed in the queue, under its organization (one allowed by the setting).
    const organization = ((await (await api('GET', '/whoami')).json()) as Json).organization.id as string;
    const waited = (text: string): number =>
      Number(
        new RegExp(`lake_query_queue_wait_seconds_count\\{organization="${organization}"\\} (\\d+)`).exec(text)?.[1] ??
          0,
      );
    expect(waited(afterText) - waited(beforeText)).toBe(3);
    expect(afterText).toContain('# TYPE lake_query_queue_depth_by_organization gauge');
    // What is read when scraped: nothing waits now, and the pool's workers are all there.
    expect(after.get('lake_query_queue_depth{}')).toBe(0);
    expect(
      (after.get('lake_query_workers_idle{}') ?? 0) + (after.get('lake_query_workers_busy{}') ?? 0),
    ).toBeGreaterThan(0);
    // Counted when it happens; nothing of it here: the families are there, with nothing lost.
    expect(after.get('lake_job_leases_lost_total{}')).toBe(0);
    expect(afterText).toContain('# TYPE lake_query_workers_lost_total counter');
    // Labels are templates, never ids: no series names a job, query or source.
    expect([...after.keys()].filter((key) => /(qr|src|syn|job)_[0-9a-z]{10}/.test(key))).toEqual([]);
  }, 60_000);
});
