import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServices } from '../../src/service/assembly/services.js';
import { homeOptionsFromEnv, openHome } from '../../src/service/home/home.js';
import { JobStore } from '../../src/service/jobs/job-store.js';
import { LakeCollector } from '../../src/service/storage/collector.js';
import { startObjectStore, startStoreProxy, type StoreProxy, type TestObjectStore } from '../helpers/object-store.js';
import { startServeProcess, type ServeProcess } from '../helpers/serve.js';
import { tempDir } from '../helpers/temp.js';

type Json = Record<string, any>;

/** The job once it has ended, looked at every 50 ms for up to 30 s. */
async function jobEnded(api: (path: string) => Promise<Json>, id: string): Promise<Json> {
  for (let i = 0; i < 600; i++) {
    const job = await api(`/jobs/${id}`);
    if (job.status !== 'queued' && job.status !== 'running') return job;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${id} never ended`);
}

describe('kill -9 of a lake serve syncing into an object store', () => {
  let store: TestObjectStore;
  let proxy: StoreProxy;
  let server: ServeProcess | undefined;
  beforeAll(async () => {
    store = await startObjectStore();
    proxy = await startStoreProxy(store.endpoint);
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await proxy?.close();
    await store?.close();
  });

  it('during an upload and between upload and commit: the old snapshot stays whole, the next sync commits once, the collector deletes the orphans', async () => {
    const prefix = `crash-${randomBytes(3).toString('hex')}`;
    const home = join(tempDir('lake-s3-crash'), 'home');
    const env = {
      LAKE_HOME: home,
      LAKE_JOB_LEASE_SECONDS: '1',
      ...store.env(prefix),
      AWS_ENDPOINT_URL_S3: proxy.endpoint,
    };
    server = await startServeProcess(env);
    const token = readFileSync(join(home, 'owner.token'), 'utf8').trim();
    const api = async (path: string, body?: unknown): Promise<Json> =>
      (await (
        await fetch(`${(server as ServeProcess).url}${path}`, {
          method: body === undefined ? 'GET' : 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
      ).json()) as Json;
    const ended = (id: string): Promise<Json> => jobEnded(api, id);
    const source = await api('/sources', { connector: 'sample', name: 'Shop', config: { scale: 2 } });
    const schema = source.destination_schema ?? source.lake_schema;
    const totals = async (): Promise<Json> => {
      const query = await api('/queries', {
        sql: `select count(*) as n, sum(amount) as total from lake.${schema}.payments`,
      });
      return (await api(`/queries/${query.id}?wait=30&format=inline`)).data[0];
    };
    expect((await ended((await api(`/sources/${source.id}/sync`, {})).id)).status).toBe('succeeded');
    const before = await totals();
    const committed = new Set(await store.keys(`${prefix}/lake/`));

    for (const phase of ['request', 'stored'] as const) {
      // The next upload hangs at this side of the store; the server is killed while it waits.
      let reached: () => void = () => undefined;
      const uploading = new Promise<void>((resolve) => (reached = resolve));
      proxy.onPut = (at) => {
        if (at !== phase) return 'forward';
        reached();
        return 'hang';
      };
      const sync = await api(`/sources/${source.id}/sync`, { full_refresh: true });
      await uploading;
      await server.stop('SIGKILL');
      proxy.onPut = () => 'forward';
      server = await startServeProcess(env);
      expect(await ended(sync.id)).toMatchObject({ status: 'failed' });
      expect(await totals()).toEqual(before);
    }
    // The upload the store completed is there, named by no snapshot.
    const orphans = (await store.keys(`${prefix}/lake/`)).filter((key) => !committed.has(key));
    expect(orphans.length).toBeGreaterThan(0);

    expect((await ended((await api(`/sources/${source.id}/sync`, { full_refresh: true })).id)).status).toBe(
      'succeeded',
    );
    expect(await totals()).toEqual(before);
    await server.stop('SIGKILL');
    server = undefined;

    // Collected an hour later (a write still under way is left ten minutes): the orphans go, nothing named does.
    const opened = await openHome(home, homeOptionsFromEnv(env));
    const services = await createServices(opened, { rateLimits: false });
    try {
      const collector = new LakeCollector(
        opened.db,
        services.lake.layout,
        services.lake.catalogs,
        new JobStore(opened.db),
        { now: () => Date.now() + 3_600_000, sleep: async () => undefined },
        { retentionSeconds: 0, intervalMs: 600_000 },
      );
      await collector.collect();
      const left = new Set(await store.keys(`${prefix}/lake/`));
      for (const orphan of orphans) expect(left.has(orphan)).toBe(false);
      const named = await (await services.lake.catalogs.for(opened.organization.id)).namedFiles();
      for (const path of named)
        expect(left.has(`${prefix}/lake/${opened.organization.id}/tables/${path}`), path).toBe(true);
    } finally {
      await services.close();
      await opened.close();
    }
  }, 120_000);
});

describe('an object store that stops under traffic and comes back', () => {
  let store: TestObjectStore;
  let server: ServeProcess | undefined;
  beforeAll(async () => {
    store = await startObjectStore();
  });
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await store?.close();
  });

  it('answers 503 with Retry-After where it is needed, fails a sync cleanly naming no host or bucket, and recovers by itself', async () => {
    const prefix = `down-${randomBytes(3).toString('hex')}`;
    const root = tempDir('lake-s3-down');
    const env = { LAKE_HOME: join(root, 'home'), ...store.env(prefix) };
    server = await startServeProcess(env);
    const token = readFileSync(join(root, 'home', 'owner.token'), 'utf8').trim();
    const call = (path: string, body?: unknown): Promise<Response> =>
      fetch(`${(server as ServeProcess).url}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const api = async (path: string, body?: unknown): Promise<Json> => (await (await call(path, body)).json()) as Json;
    const ended = (id: string): Promise<Json> => jobEnded(api, id);
    const source = await api('/sources', { connector: 'sample', name: 'Shop', config: { scale: 2 } });
    const schema = source.destination_schema ?? source.lake_schema;
    const sql = `select count(*) as n, sum(amount) as total from lake.${schema}.payments`;
    expect((await ended((await api(`/sources/${source.id}/sync`, {})).id)).status).toBe('succeeded');
    const before = (await api(`/queries/${(await api('/queries', { sql })).id}?wait=30&format=inline`)).data;

    // A second server on the same home with an empty cache: what it reads must come from the store.
    await server.stop('SIGKILL');
    server = await startServeProcess({ ...env, LAKE_CACHE_DIR: join(root, 'cold-cache') });
    expect((await call('/readyz')).status).toBe(200);
    await store.stop();
    try {
      // Out of rotation while its files cannot be reached (readiness trusts a success for up to five seconds).
      let unready = await call('/readyz');
      for (let i = 0; i < 100 && unready.status === 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        unready = await call('/readyz');
      }
      expect(unready.status).toBe(503);
      expect(((await unready.json()) as Json).error.message).toMatch(/object store/);
      const refused = await call('/queries', { sql });
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      const body = (await refused.json()) as Json;
      expect(body.error.code).toBe('service_unavailable');
      expect(body.error.message).not.toMatch(/127\.0\.0\.1|lake-test|S3RVER|parquet/);

      const sync = await ended((await api(`/sources/${source.id}/sync`, { full_refresh: true })).id);
      expect(sync.status).toBe('failed');
      expect(JSON.stringify(sync.error)).toMatch(/object store/);
      expect(JSON.stringify(sync.error)).not.toMatch(/127\.0\.0\.1|lake-test|S3RVER/);
    } finally {
      await store.start();
    }
    // The store's key never reaches a log line or an answer.
    expect(JSON.stringify((server as ServeProcess).logLines())).not.toContain(store.env(prefix).AWS_SECRET_ACCESS_KEY);
    // Back: no restart needed.
    expect((await call('/readyz')).status).toBe(200);
    expect((await api(`/queries/${(await api('/queries', { sql })).id}?wait=30&format=inline`)).data).toEqual(before);
    expect((await ended((await api(`/sources/${source.id}/sync`, { full_refresh: true })).id)).status).toBe(
      'succeeded',
    );
    expect((await api(`/queries/${(await api('/queries', { sql })).id}?wait=30&format=inline`)).data).toEqual(before);
  }, 120_000);
});
