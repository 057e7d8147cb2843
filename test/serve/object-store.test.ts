import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetadataDatabase } from '../helpers/postgres.js';
import { startObjectStore, type TestObjectStore } from '../helpers/object-store.js';
import { startReplicaSet, type ReplicaSet } from '../helpers/replicas.js';
import type { ServeProcess } from '../helpers/serve.js';

type Json = Record<string, any>;

const call = (replica: ServeProcess, token: string, method: string, path: string, body?: unknown): Promise<Response> =>
  fetch(`${replica.url}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** Runs a query to its end on a replica and returns its rows (inline). */
async function rows(replica: ServeProcess, token: string, sql: string): Promise<unknown[]> {
  const submitted = (await (await call(replica, token, 'POST', '/queries', { sql })).json()) as Json;
  expect(submitted.error, JSON.stringify(replica.logLines().filter((l) => l.level === 'error'))).toBeUndefined();
  const done =
    submitted.status === 'succeeded' || submitted.status === 'failed'
      ? submitted
      : ((await (await call(replica, token, 'GET', `/queries/${submitted.id}?wait=30&format=inline`)).json()) as Json);
  expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
  return done.data as unknown[];
}

async function syncToEnd(replica: ServeProcess, token: string, source: string, body: Json = {}): Promise<void> {
  const sync = (await (await call(replica, token, 'POST', `/sources/${source}/sync`, body)).json()) as Json;
  for (let i = 0; i < 300; i++) {
    const job = (await (await call(replica, token, 'GET', `/jobs/${sync.id}`)).json()) as Json;
    if (job.status !== 'queued' && job.status !== 'running') {
      expect(job.status, JSON.stringify(job.error)).toBe('succeeded');
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`sync ${sync.id} did not end`);
}

describe('replicas with no shared directory', () => {
  let database: { url: string; drop(): Promise<void> };
  let set: ReplicaSet;

  beforeAll(async () => {
    database = await createMetadataDatabase();
    // Each replica its own home, and no LAKE_DATA_DIR: the files one writes are on its disk alone.
    set = await startReplicaSet(database.url, 2, { LAKE_DATA_DIR: '' });
  }, 90_000);
  afterAll(async () => {
    await set?.stop();
    await database?.drop();
  }, 60_000);

  it('a replica without the files a commit names answers 503 service_unavailable saying what to fix, not 500', async () => {
    const [one, two] = set.replicas as [ServeProcess, ServeProcess];
    await rows(one, set.token, 'select count(*) as n from lake.demo.orders');
    const answer = await call(two, set.token, 'POST', '/queries', {
      sql: 'select count(*) as n from lake.demo.orders',
    });
    expect(answer.status, JSON.stringify(two.logLines().filter((l) => l.level === 'error'))).toBe(503);
    expect(answer.headers.get('retry-after')).toBeTruthy();
    const body = (await answer.json()) as Json;
    expect(body.error.code).toBe('service_unavailable');
    expect(body.error.message).toMatch(/LAKE_DATA_DIR/);
    expect(body.error.message).toMatch(/LAKE_DATA_URL/);
  }, 60_000);
});

describe('three replicas on an object store, each with its own cache', () => {
  let database: { url: string; drop(): Promise<void> };
  let store: TestObjectStore;
  let set: ReplicaSet;
  const prefix = `lake-${randomBytes(3).toString('hex')}`;
  let expected: { sql: string; answer: unknown[]; source: string } = { sql: '', answer: [], source: '' };

  beforeAll(async () => {
    database = await createMetadataDatabase();
    store = await startObjectStore();
    set = await startReplicaSet(database.url, 3, { LAKE_DATA_DIR: '', ...store.env(prefix) });
  }, 90_000);
  afterAll(async () => {
    await set?.stop();
    await store?.close();
    await database?.drop();
  }, 60_000);

  it('a sync on one replica is read by the other two, cold, with the same answers', async () => {
    const [one, two, three] = set.replicas as [ServeProcess, ServeProcess, ServeProcess];
    const source = (await (
      await call(one, set.token, 'POST', '/sources', { connector: 'sample', name: 'Shop', config: { scale: 2 } })
    ).json()) as Json;
    await syncToEnd(one, set.token, source.id as string);
    const keys = await store.keys(`${prefix}/lake/`);
    expect(keys.filter((k) => k.endsWith('.parquet')).length).toBeGreaterThan(0);
    const schema = source.destination_schema ?? source.lake_schema;
    const sql = `select count(*) as n, sum(amount) as total from lake.${schema}.payments`;
    const answers = [
      await rows(one, set.token, sql),
      await rows(two, set.token, sql),
      await rows(three, set.token, sql),
    ];
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect((answers[0]?.[0] as Json).n).toBeGreaterThan(0);
    expected = { sql, answer: answers[0] as unknown[], source: source.id as string };
  }, 120_000);

  it('a result is downloaded by its link from replicas that did not run it, whole and by Range, as Parquet and CSV made once', async () => {
    const [one, two, three] = set.replicas as [ServeProcess, ServeProcess, ServeProcess];
    const submitted = (await (
      await call(one, set.token, 'POST', '/queries', {
        sql: 'select range as n, md5(range::varchar) as h from range(20000)',
      })
    ).json()) as Json;
    const done = (await (await call(one, set.token, 'GET', `/queries/${submitted.id}?wait=30`)).json()) as Json;
    expect(done.status).toBe('succeeded');
    const linkOn = async (replica: ServeProcess, format: string): Promise<string> => {
      const answer = (await (
        await call(
          replica,
          set.token,
          'GET',
          `/queries/${submitted.id}?format=files${format === 'parquet' ? '' : `&file_format=${format}`}`,
        )
      ).json()) as Json;
      return answer.files[0].url as string;
    };
    const parquet = Buffer.from(await (await fetch(await linkOn(one, 'parquet'))).arrayBuffer());
    const fromTwo = Buffer.from(
      await (await fetch((await linkOn(two, 'parquet')).replace(one.url, two.url))).arrayBuffer(),
    );
    expect(fromTwo.equals(parquet)).toBe(true);
    const ranged = await fetch((await linkOn(one, 'parquet')).replace(one.url, three.url), {
      headers: { Range: 'bytes=4-99' },
    });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(parquet.subarray(4, 100))).toBe(true);

    // CSV made on replica 2 is kept beside the result: replica 3 serves the same bytes without making it again.
    const csvTwo = await (await fetch((await linkOn(two, 'csv')).replace(one.url, two.url))).text();
    expect(csvTwo.split('\r\n')[0]).toBe('n,h');
    expect(await store.keys(`${prefix}/results/`)).toEqual(
      expect.arrayContaining([expect.stringMatching(new RegExp(`${submitted.id}/result\\.csv$`))]),
    );
    const csvThree = await (await fetch((await linkOn(three, 'csv')).replace(one.url, three.url))).text();
    expect(csvThree).toBe(csvTwo);
  }, 60_000);

  it('a query queued on a replica with no worker free is run by another, whose cache lacks its session catalog', async () => {
    const [one] = set.replicas as [ServeProcess];
    // The table's same rows as a new snapshot: no replica has a session catalog of it yet.
    await syncToEnd(one, set.token, expected.source, { full_refresh: true });
    // One worker per organization on each replica: a long query holds replica 1's.
    const long = (await (
      await call(one, set.token, 'POST', '/queries', {
        sql: 'select count(*) from range(1000000000000) t(i) where i % 7 = 3',
      })
    ).json()) as Json;
    try {
      for (let i = 0; i < 100; i++) {
        const job = (await (await call(one, set.token, 'GET', `/jobs/${long.id}`)).json()) as Json;
        if (job.status === 'running') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const waiting = (await (await call(one, set.token, 'POST', '/queries', { sql: expected.sql })).json()) as Json;
      expect(waiting.status).toBe('queued');
      const answered = (await (
        await call(one, set.token, 'GET', `/queries/${waiting.id}?wait=20&format=inline`)
      ).json()) as Json;
      expect(answered.status, JSON.stringify(answered.error)).toBe('succeeded');
      expect(answered.data).toEqual(expected.answer);
    } finally {
      await call(one, set.token, 'POST', `/jobs/${long.id}/cancel`);
    }
  }, 60_000);
});
