import { expect } from 'vitest';
import type { Harness } from './transports.js';
import type { TestDatabase } from './postgres.js';
import { waitFor } from './wait-for.js';

export type Json = Record<string, any>;

/** A query that keeps two cores busy for minutes unless stopped. */
export const SLOW_SQL = 'select max(hash(a.range + b.range)) from range(200000) a, range(100000) b';

export async function submit(
  api: Harness,
  sql: unknown,
  init: { key?: string; token?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (init.key) headers['Idempotency-Key'] = init.key;
  return api.request('/queries', { method: 'POST', body: JSON.stringify({ sql }), headers, token: init.token });
}

export async function submitOk(api: Harness, sql: string): Promise<Json> {
  const response = await submit(api, sql);
  const body = (await response.json()) as Json;
  expect(response.status, JSON.stringify(body)).toBe(202);
  return body;
}

/** Polls until the query finishes (the wait parameter makes this quick on both transports). */
export async function finished(api: Harness, id: string, query = ''): Promise<Json> {
  for (let i = 0; i < 200; i++) {
    const body = (await (await api.request(`/queries/${id}?wait=5${query}`)).json()) as Json;
    if (body.status !== 'running' && body.status !== 'queued') return body;
  }
  throw new Error(`query ${id} did not finish`);
}

export async function run(api: Harness, sql: string, query = '&format=inline&limit=1000'): Promise<Json> {
  return finished(api, (await submitOk(api, sql)).id as string, query);
}

export async function expectError(response: Response, status: number, code: string, param?: string): Promise<Json> {
  const body = (await response.json()) as Json;
  expect(response.status, JSON.stringify(body)).toBe(status);
  expect(body.error.code).toBe(code);
  if (param !== undefined) expect(body.error.param).toBe(param);
  expect(body.error.request_id).toBe(response.headers.get('request-id'));
  return body.error;
}

const ended = (job: Json): boolean => job.status !== 'queued' && job.status !== 'running';

/**
 * Waits for a job to end (or to satisfy `until`), reading it through the API with `get` (a path to its JSON), and
 * returns it; throws with its last state when it does not within `timeoutMs`.
 */
export async function jobWhen(
  get: (path: string) => Promise<Json>,
  id: string,
  until: (job: Json) => boolean = ended,
  timeoutMs = 30_000,
): Promise<Json> {
  const job = await waitFor(() => get(`/jobs/${id}`), until, { timeoutMs, intervalMs: 50 });
  if (!until(job)) throw new Error(`job ${id} did not get there: ${JSON.stringify(job)}`);
  return job;
}

/** Starts a sync of the source over the API and waits for its job to succeed; returns the job. */
export async function syncSucceeded(api: Harness, sourceId: string): Promise<Json> {
  const accepted = (await (
    await api.request(`/sources/${sourceId}/sync`, {
      method: 'POST',
      body: '{}',
      headers: { 'Content-Type': 'application/json' },
    })
  ).json()) as Json;
  const job = await jobWhen(async (path) => (await (await api.request(path)).json()) as Json, accepted.id as string);
  expect(job.status, JSON.stringify(job)).toBe('succeeded');
  return job;
}

/**
 * Calls the API as a JSON client: the body sent as JSON, the answer parsed; an error status throws with the
 * answer, so a test reads as its happy path and still says why when it is not.
 */
export function jsonClient(api: Harness): (method: string, path: string, body?: object) => Promise<Json> {
  return async (method, path, body) => {
    const response = await api.request(path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    });
    const parsed = (await response.json()) as Json;
    if (response.status >= 400) throw new Error(`${method} ${path}: ${JSON.stringify(parsed)}`);
    return parsed;
  };
}

/** Starts a sync of the source and waits for its job to end, whatever the end; returns the job. */
export async function syncEnded(api: Harness, sourceId: string): Promise<Json> {
  const call = jsonClient(api);
  const accepted = await call('POST', `/sources/${sourceId}/sync`, {});
  return jobWhen((path) => call('GET', path), accepted.id as string);
}

/** Creates a source of the test database `db` over the API, read as its reader role; returns the source. */
export async function createPostgresSource(
  api: Harness,
  db: Pick<TestDatabase, 'host' | 'port' | 'database' | 'reader'>,
  name: string,
): Promise<Json> {
  return jsonClient(api)('POST', '/sources', {
    connector: 'postgres',
    name,
    config: { port: db.port, database: db.database },
    host: db.host,
    user: db.reader,
  });
}
