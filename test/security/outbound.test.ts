import { chmodSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_DEFAULTS, SERVE_DEFAULTS } from '../../src/service/net/outbound.js';
import { startPasswordHarvester } from '../helpers/fake-postgres.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { expectError, type Json } from '../helpers/queries.js';
import { tempDir } from '../helpers/temp.js';
import { inMemory, type Harness } from '../helpers/transports.js';

const json = (body: object): RequestInit => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

describe("lake serve's default outbound rules keep tenants off the server's own machine", () => {
  let api: Harness;
  let listener: Server;
  let hits = 0;
  let port = 0;
  beforeAll(async () => {
    api = await inMemory.start({ services: { outbound: SERVE_DEFAULTS } });
    // A listener on IPv6 loopback: what `::` and the other spellings would reach.
    listener = createHttpServer((_req, res) => {
      hits++;
      res.end('ok');
    });
    await new Promise<void>((resolve) => listener.listen(0, '::1', resolve));
    port = (listener.address() as { port: number }).port;
  });
  afterAll(async () => {
    await api?.close();
    await new Promise((resolve) => listener?.close(resolve));
  });

  it('refuses loopback, unspecified and metadata addresses in every spelling, for sources and webhooks', async () => {
    const hosts = [
      '127.0.0.1',
      'localhost',
      '127.1',
      '2130706433',
      '0x7f.0.0.1',
      '0',
      '0.0.0.0',
      '::',
      '[::]',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      '::ffff:7f00:1',
      '::ffff:127.0.0.1',
      '::127.0.0.1',
      '::ffff:a9fe:a9fe',
      '169.254.169.254',
      'LOCALHOST',
    ];
    for (const host of hosts) {
      await expectError(
        await api.request(
          '/sources',
          json({ connector: 'postgres', name: `s ${host}`, host, user: 'u', config: { port, database: 'd' } }),
        ),
        403,
        'host_not_allowed',
      );
    }
    for (const host of ['[::]', '[::1]', '[::ffff:7f00:1]', '127.1', '2130706433', 'localhost', '0']) {
      const url = `http://${host}:${port}/hook`;
      await expectError(
        await api.request(
          '/sends',
          json({ name: `w ${host}`, sql: 'select 1', destination: { type: 'webhook', url } }),
        ),
        403,
        'host_not_allowed',
      );
    }
    expect(hits).toBe(0);
  });

  it('local mode keeps reaching loopback, as its user would', async () => {
    const local = await inMemory.start({ services: { outbound: LOCAL_DEFAULTS } });
    try {
      const created = await local.request(
        '/sources',
        json({ connector: 'postgres', name: 'mine', host: '::1', user: 'u', config: { port, database: 'd' } }),
      );
      expect(created.status).toBe(201);
    } finally {
      await local.close();
    }
  });
});

/**
 * Finding 2: node-postgres fills a missing password from PGPASSWORD or ~/.pgpass, which hold the server's own
 * database password. A source and a send without a password, pointed at a fake server that asks for one in clear
 * text, must send it nothing of the server's.
 */
describe("tenant connections never use the server's own PostgreSQL settings", () => {
  const saved = { ...process.env };
  let api: Harness;
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    api = await inMemory.start({ services: { outbound: LOCAL_DEFAULTS } });
  }, 60_000);
  afterEach(() => {
    for (const name of Object.keys(process.env)) if (name.startsWith('PG')) delete process.env[name];
    Object.assign(process.env, saved);
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  it('a source and a send without a password send none, with PGPASSWORD, PGPASSFILE and PGUSER set for the server', async () => {
    const harvester = await startPasswordHarvester();
    try {
      const passfile = join(tempDir('lake-pgpass'), '.pgpass');
      writeFileSync(passfile, '*:*:*:*:pgpass-server-secret\n');
      chmodSync(passfile, 0o600);
      Object.assign(process.env, {
        PGPASSWORD: 'env-server-secret',
        PGPASSFILE: passfile,
        PGUSER: 'server_role',
        PGHOST: '127.0.0.1',
        PGDATABASE: 'server_db',
        PGOPTIONS: '-c search_path=secret',
      });
      const source = (await (
        await api.request(
          '/sources',
          json({
            connector: 'postgres',
            name: 'no password',
            host: '127.0.0.1',
            user: 'tenant',
            config: { port: harvester.port, database: 'd' },
          }),
        )
      ).json()) as Json;
      const tested = (await (await api.request(`/sources/${source.id}/test`, { method: 'POST' })).json()) as Json;
      expect(tested).toMatchObject({ ok: false, reason: 'authentication_failed' });
      const sync = (await (await api.request(`/sources/${source.id}/sync`, json({}))).json()) as Json;
      let job: Json = {};
      for (let i = 0; i < 100; i++) {
        job = (await (await api.request(`/jobs/${sync.id}`)).json()) as Json;
        if (job.status !== 'queued' && job.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(job.status).toBe('failed');
      const send = (await (
        await api.request(
          '/sends',
          json({
            name: 'out',
            sql: 'select 1 as a',
            destination: {
              type: 'postgres',
              host: '127.0.0.1',
              user: 'tenant',
              port: harvester.port,
              database: 'd',
              table: 't',
              mode: 'replace',
            },
          }),
        )
      ).json()) as Json;
      const run = (await (await api.request(`/sends/${send.id}/run`, { method: 'POST' })).json()) as Json;
      let state: Json = {};
      for (let i = 0; i < 100; i++) {
        state = (await (await api.request(`/sends/${send.id}/runs/${run.id}`)).json()) as Json;
        if (state.status !== 'queued' && state.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      // It fails (a run that could not connect once hung in running for ever), and says nothing of the server's.
      expect(state.status).toBe('failed');
      expect(harvester.received.join('|')).not.toMatch(/server-secret/);
      expect(harvester.received).toEqual([]);
      // With a password of its own, the source sends that one.
      await api.request(`/sources/${source.id}`, {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ password: 'tenant-own' }),
      });
      await api.request(`/sources/${source.id}/test`, { method: 'POST' });
      expect(harvester.received).toEqual(['tenant-own']);
    } finally {
      await harvester.stop();
    }
  });
});
