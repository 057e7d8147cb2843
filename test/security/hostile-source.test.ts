import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/service/auth/scopes.js';
import { LOCAL_DEFAULTS } from '../../src/service/net/outbound.js';
import { SYNC_DEFAULTS, type SyncSettings } from '../../src/service/syncs/settings.js';
import { startFakePostgres, type FakePostgres } from '../helpers/fake-postgres.js';
import { adminQuery, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import type { Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';
import { waitFor } from '../helpers/wait-for.js';

const SCOPES: Scope[] = [
  'apps:manage',
  'apps:read',
  'jobs:read',
  'jobs:manage',
  'data:read',
  'logs:read',
  'sends:manage',
  'sends:read',
  'query:read',
] as Scope[];

/** A harness whose syncs run as lake serve runs them, with the given bounds. */
async function startWith(settings: Partial<SyncSettings>): Promise<Harness> {
  return inMemory.start({ services: { outbound: LOCAL_DEFAULTS, syncSettings: { ...SYNC_DEFAULTS, ...settings } } });
}

async function tenant(
  api: Harness,
  name: string,
): Promise<(method: string, path: string, body?: object) => Promise<Json & { http: number }>> {
  const organization = await api.home.directory.createOrganization(name);
  const user = await api.home.directory.createUser(organization.id, `${name} owner`, 'owner');
  const token = (
    await api.home.credentials.issue({
      kind: 'pat',
      organizationId: organization.id,
      userId: user.id,
      name: 't',
      scopes: SCOPES,
    })
  ).secret;
  return async (method, path, body) => {
    const response = await api.request(path, {
      method,
      token,
      headers: body ? { 'Content-Type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    return Object.assign((await response.json()) as Json, { http: response.status });
  };
}

const hasEnded = (job: Json): boolean => job.status !== 'running' && job.status !== 'queued';

/** Waits until a fake server has no connection open; gives the count left. */
const closed = (open: () => number, ms: number): Promise<number> => waitFor(open, (n) => n === 0, ms);

const fakeSource = (fake: FakePostgres, name: string): object => ({
  connector: 'postgres',
  name,
  host: '127.0.0.1',
  user: 'tenant',
  password: 'pw',
  config: { port: fake.port, database: 'd', sync_connections: 1 },
});

/**
 * Finding 4: a PostgreSQL whose COPY never ends held the only sync slot (another organization's sync stayed queued
 * for 526 s), its cancel never took (the socket was never closed), and SIGTERM never finished.
 */
describe('a source cannot hold the service', () => {
  let api: Harness;
  const fakes: FakePostgres[] = [];
  beforeAll(async () => {
    api = await startWith({ concurrency: 3, perOrganization: 2 });
  });
  afterAll(async () => {
    await api?.close();
    for (const fake of fakes) await fake.stop();
  });

  it("hanging sources of one organization never keep another's sync queued; a cancel ends one in seconds", async () => {
    const mallory = await tenant(api, 'Hangs');
    const alice = await tenant(api, 'Honest');
    const syncs: string[] = [];
    for (let i = 0; i < 3; i++) {
      const fake = await startFakePostgres('hang');
      fakes.push(fake);
      const source = await mallory('POST', '/sources', fakeSource(fake, `hang ${i}`));
      expect(source.http, JSON.stringify(source)).toBe(201);
      syncs.push((await mallory('POST', `/sources/${source.id}/sync`, {})).id);
    }
    // Two of them hang in their COPY (the organization's cap here); the third waits its turn.
    await waitFor(
      async () => fakes.reduce((n, f) => n + f.copies(), 0),
      (n) => n >= 2,
      10_000,
    );
    const demo = await alice('POST', '/sources', { connector: 'sample', name: 'honest demo' });
    const started = Date.now();
    const honest = await alice('POST', `/sources/${demo.id}/sync`, {});
    const finished = await waitFor(
      () => alice('GET', `/jobs/${honest.id}`),
      (j) => j.status === 'succeeded' || j.status === 'failed',
      20_000,
    );
    expect(finished.status).toBe('succeeded');
    expect(Date.now() - started).toBeLessThan(15_000);

    // Cancel the first hanging sync: it ends cancelled within 5 s, with no connection left open on its source.
    const cancelAt = Date.now();
    expect((await mallory('POST', `/jobs/${syncs[0]}/cancel`)).http).toBe(200);
    const cancelled = await waitFor(
      () => mallory('GET', `/jobs/${syncs[0]}`),
      (j) => j.status !== 'running',
      5_000,
    );
    expect(cancelled.status).toBe('cancelled');
    expect(Date.now() - cancelAt).toBeLessThan(5_000);
    expect(await closed(() => (fakes[0] as FakePostgres).open(), 2_000)).toBe(0);
    // A new sync of that source is accepted at once.
    const source = (await mallory('GET', '/sources')).data.find((s: Json) => s.name === 'hang 0');
    const again = await mallory('POST', `/sources/${source.id}/sync`, {});
    expect(again.http).toBe(202);
    for (const id of [...syncs, again.id]) await mallory('POST', `/jobs/${id}/cancel`);
    for (const id of [...syncs, again.id])
      expect((await waitFor(() => mallory('GET', `/jobs/${id}`), hasEnded, 5_000)).status).toBe('cancelled');
  }, 60_000);
});

describe('a destination database cannot hold a send run', () => {
  let api: Harness;
  let fake: FakePostgres;
  beforeAll(async () => {
    fake = await startFakePostgres('rows', { hangOn: /^\s*insert/i });
    api = await startWith({});
  });
  afterAll(async () => {
    await api?.close();
    await fake?.stop();
  });

  it('a cancel ends a run whose destination never answers its INSERT, its connection closed', async () => {
    const call = await tenant(api, 'Sender');
    const send = await call('POST', '/sends', {
      name: 'to a black hole',
      sql: 'select 1 as a',
      destination: {
        type: 'postgres',
        host: '127.0.0.1',
        user: 'u',
        password: 'p',
        port: fake.port,
        database: 'd',
        table: 't',
        mode: 'replace',
      },
    });
    expect(send.http, JSON.stringify(send)).toBe(201);
    const run = await call('POST', `/sends/${send.id}/run`);
    // Cancelled once the destination holds the INSERT it will never answer.
    expect(await waitFor(() => fake.hung(), Boolean, 10_000)).toBe(true);
    const cancelAt = Date.now();
    expect((await call('POST', `/jobs/${run.id}/cancel`)).http).toBe(200);
    const job = await waitFor(() => call('GET', `/jobs/${run.id}`), hasEnded, 5_000);
    expect(job.status).toBe('cancelled');
    expect(Date.now() - cancelAt).toBeLessThan(5_000);
    expect(await closed(() => fake.open(), 2_000)).toBe(0);
  }, 30_000);
});

describe('every read from a source is bounded', () => {
  let api: Harness;
  const fakes: FakePostgres[] = [];
  beforeAll(async () => {
    api = await startWith({ idleTimeoutMs: 1_000, maxRecordBytes: 1 << 20 });
  });
  afterAll(async () => {
    await api?.close();
    for (const fake of fakes) await fake.stop();
  });

  it('a source that stops sending fails the sync after the idle timeout, its connections closed', async () => {
    const fake = await startFakePostgres('hang');
    fakes.push(fake);
    const call = await tenant(api, 'Idle');
    const source = await call('POST', '/sources', fakeSource(fake, 'idle'));
    const sync = await call('POST', `/sources/${source.id}/sync`, {});
    const job = await waitFor(() => call('GET', `/jobs/${sync.id}`), hasEnded, 10_000);
    expect(job.status).toBe('failed');
    expect(job.error.message).toMatch(/sent nothing for 1 s \(LAKE_SYNC_IDLE_TIMEOUT_SECONDS\)/);
    expect(await closed(() => fake.open(), 2_000)).toBe(0);
  }, 30_000);

  it('a source reached over TLS that stops sending fails the sync after the idle timeout too', async () => {
    // node-postgres swaps its socket for a TLS one after the handshake; the idle watch is set on the first.
    const fake = await startFakePostgres('hang', { tls: true });
    fakes.push(fake);
    const call = await tenant(api, 'Idle TLS');
    const plain = fakeSource(fake, 'idle tls') as { config: object };
    const source = await call('POST', '/sources', { ...plain, config: { ...plain.config, ssl_mode: 'require' } });
    const sync = await call('POST', `/sources/${source.id}/sync`, {});
    const job = await waitFor(() => call('GET', `/jobs/${sync.id}`), hasEnded, 10_000);
    expect(job.status).toBe('failed');
    expect(job.error.message).toMatch(/sent nothing for 1 s \(LAKE_SYNC_IDLE_TIMEOUT_SECONDS\)/);
    expect(await closed(() => fake.open(), 2_000)).toBe(0);
  }, 30_000);

  it('a sync past its time bound is stopped with that reason, even while its source keeps the connection alive', async () => {
    const bounded = await startWith({ idleTimeoutMs: 60_000, maxDurationMs: 2_000 });
    try {
      const fake = await startFakePostgres('hang');
      fakes.push(fake);
      const call = await tenant(bounded, 'Bounded');
      const source = await call('POST', '/sources', fakeSource(fake, 'bounded'));
      const sync = await call('POST', `/sources/${source.id}/sync`, {});
      const job = await waitFor(() => call('GET', `/jobs/${sync.id}`), hasEnded, 15_000);
      expect(job.status).toBe('failed');
      expect(job.error.message).toMatch(/still running after 2 s, its time bound \(LAKE_SYNC_TIMEOUT_SECONDS\)/);
      expect(await closed(() => fake.open(), 2_000)).toBe(0);
    } finally {
      await bounded.close();
    }
  }, 30_000);

  it('a record that never ends fails its table at the record cap, with next to nothing staged', async () => {
    const fake = await startFakePostgres('endless-record');
    fakes.push(fake);
    const call = await tenant(api, 'Endless');
    const source = await call('POST', '/sources', fakeSource(fake, 'endless'));
    const sync = await call('POST', `/sources/${source.id}/sync`, {});
    let largest = 0;
    const staging = join(api.home.paths.root, 'staging', sync.id);
    const job = await waitFor(
      async () => {
        try {
          for (const file of readdirSync(staging)) largest = Math.max(largest, statSync(join(staging, file)).size);
        } catch {
          // Not made yet, or already removed.
        }
        return call('GET', `/jobs/${sync.id}`);
      },
      hasEnded,
      20_000,
    );
    expect(job.status).toBe('failed');
    expect(job.error.message).toMatch(/larger than 1 MiB, the longest a sync takes \(LAKE_SYNC_MAX_RECORD_BYTES\)/);
    // Asked to stop the COPY, it went on sending: its connection was closed, saying so, not left to the idle timeout.
    expect(fake.cancels()).toBeGreaterThan(0);
    expect(job.error.message).toMatch(
      /^The sync failed: the source went on sending a table after lake stopped reading it/,
    );
    expect(job.error.message).not.toContain(api.home.paths.root);
    expect(largest).toBeLessThan(3 << 20);
    expect(await closed(() => fake.open(), 3_000)).toBe(0);
  }, 30_000);

  it('a message announced longer than the record cap ends the connection before the driver buffers it', async () => {
    // node-postgres collects a message whole before it hands it on (a COPY's rows are streamed, a statement's are
    // not): without a bound on the wire it would take in all 96 MiB the fake sends of one row of a catalog query (and
    // 1.5 GiB from a server that sent it all), then wait for the rest.
    const fake = await startFakePostgres('huge-message');
    fakes.push(fake);
    const call = await tenant(api, 'Huge');
    const source = await call('POST', '/sources', fakeSource(fake, 'huge'));
    const sync = await call('POST', `/sources/${source.id}/sync`, {});
    const job = await waitFor(() => call('GET', `/jobs/${sync.id}`), hasEnded, 20_000);
    expect(job.status).toBe('failed');
    expect(job.error.message).toMatch(/larger than 1 MiB, the longest a sync takes \(LAKE_SYNC_MAX_RECORD_BYTES\)/);
    expect(await closed(() => fake.open(), 3_000)).toBe(0);
    // What the sockets' buffers on both sides held when the connection was ended, no more.
    expect(fake.hugeBytes()).toBeLessThan(32 << 20);
  }, 30_000);

  it("a plan statement answered with rows without end ends the connection at a few rows' worth", async () => {
    // node-postgres keeps a statement's rows until it ends: without a bound it would take in all 64 MiB the fake
    // sends (and without end from a server that went on), then wait.
    const fake = await startFakePostgres('endless-rows');
    fakes.push(fake);
    const call = await tenant(api, 'Rows');
    const source = await call('POST', '/sources', fakeSource(fake, 'rows'));
    const sync = await call('POST', `/sources/${source.id}/sync`, {});
    const job = await waitFor(() => call('GET', `/jobs/${sync.id}`), hasEnded, 20_000);
    expect(job.status).toBe('failed');
    // Four of the longest rows the sync takes (1 MiB) and their framing.
    expect(job.error.message).toMatch(/answered one statement with more than 8 MiB of rows, more than lake reads/);
    expect(await closed(() => fake.open(), 3_000)).toBe(0);
    expect(fake.hugeBytes()).toBeLessThan(32 << 20);
  }, 30_000);
});

/**
 * A connection test or a discovery reads a bounded catalog in all, over TLS as in the clear. The bound was counted on
 * the socket a connection opened with, which stops receiving once node-postgres reads through the TLS session over
 * it: a catalog answered without end over TLS was taken up to the per-statement bound (260 MiB), 160 MiB here, and the
 * test then waited for its timeout.
 */
describe('a discovery over TLS', () => {
  let api: Harness;
  let fake: FakePostgres;
  beforeAll(async () => {
    api = await startWith({});
    fake = await startFakePostgres('endless-catalog', { tls: true });
  });
  afterAll(async () => {
    await fake?.stop();
    await api?.close();
  });

  it('is ended at the bytes a discovery reads when the catalog never ends', async () => {
    const call = await tenant(api, 'Catalog');
    const source = await call('POST', '/sources', {
      ...fakeSource(fake, 'endless catalog'),
      config: { port: fake.port, database: 'd', ssl_mode: 'require' },
    });
    expect(source.http, JSON.stringify(source)).toBe(201);
    const started = Date.now();
    const tested = await call('POST', `/sources/${source.id}/test`);
    expect(tested).toMatchObject({ ok: false });
    expect(Date.now() - started).toBeLessThan(8_000);
    // The discovery's 64 MiB were read, and the connection ended before the fake's 160 MiB were all sent (what it
    // counts is what it gave its TLS session, which buffers on its side beyond what lake read).
    expect(fake.hugeBytes()).toBeGreaterThan(64 << 20);
    expect(fake.hugeBytes()).toBeLessThan(160 << 20);
    expect(await closed(() => fake.open(), 3_000)).toBe(0);
  }, 30_000);
});

/** The honest version of finding 4: ^C during a large table left two backends holding the source's xmin. */
describe('cancelling an honest sync mid-table', () => {
  let api: Harness;
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await adminQuery(
      'CREATE TABLE public.events AS SELECT g AS id, md5(g::text) AS payload, now() AS at FROM generate_series(1, 3000000) g; ALTER TABLE public.events ADD PRIMARY KEY (id); ANALYZE public.events',
      db.database,
    );
    await adminQuery(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${db.reader}`, db.database);
    api = await startWith({});
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  it('a 3 M-row COPY cancelled mid-read ends cancelled within 5 s, with no backend left on the source', async () => {
    const call = await tenant(api, 'Big');
    const other = await tenant(api, 'Other');
    const source = await call('POST', '/sources', {
      connector: 'postgres',
      name: 'big',
      host: db.host,
      user: db.reader,
      config: { port: db.port, database: db.database },
    });
    expect(source.http, JSON.stringify(source)).toBe(201);
    const sync = await call('POST', `/sources/${source.id}/sync`, { tables: ['public.events'] });
    const backends = async (): Promise<number> =>
      Number(
        (
          await adminQuery(
            `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = '${db.database}' AND application_name = 'lake'`,
          )
        ).rows[0].n,
      );
    // Cancelled while rows are being read.
    const reading = await waitFor(
      () => call('GET', `/sources/${source.id}`),
      (s) => (s.latest_sync?.tables ?? []).some((t: Json) => t.phase === 'extracting' && t.completed > 0),
      30_000,
    );
    expect(JSON.stringify(reading.latest_sync)).toContain('extracting');
    // Another organization's sync runs meanwhile, and is not disturbed by the cancel.
    const demo = await other('POST', '/sources', { connector: 'sample', name: 'other demo', config: { scale: 20 } });
    const otherSync = await other('POST', `/sources/${demo.id}/sync`, {});
    await waitFor(
      () => other('GET', `/jobs/${otherSync.id}`),
      (j) => j.status !== 'queued',
      5_000,
    );
    const cancelAt = Date.now();
    expect((await call('POST', `/jobs/${sync.id}/cancel`)).http).toBe(200);
    const job = await waitFor(
      () => call('GET', `/jobs/${sync.id}`),
      (j) => j.status !== 'running',
      5_000,
    );
    expect(job.status).toBe('cancelled');
    expect(Date.now() - cancelAt).toBeLessThan(5_000);
    expect(await waitFor(backends, (n) => n === 0, 3_000)).toBe(0);
    const again = await call('POST', `/sources/${source.id}/sync`, { tables: ['public.events'] });
    expect(again.http).toBe(202);
    await call('POST', `/jobs/${again.id}/cancel`);
    await waitFor(() => call('GET', `/jobs/${again.id}`), hasEnded, 5_000);
    expect((await waitFor(() => other('GET', `/jobs/${otherSync.id}`), hasEnded, 30_000)).status).toBe('succeeded');
  }, 60_000);
});
