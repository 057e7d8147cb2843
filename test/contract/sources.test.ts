import { TEST_STORE } from '../helpers/test-store.js';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobStore } from '../../src/service/jobs/job-store.js';
import { secretsKeyFile } from '../../src/service/home/key-files.js';
import { SecretBox } from '../../src/service/sources/secret-box.js';
import { tempDir } from '../helpers/temp.js';
import {
  createTestDatabase,
  freePort,
  startPasswordServer,
  type PasswordServer,
  type TestDatabase,
} from '../helpers/postgres.js';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { expectError, type Json } from '../helpers/queries.js';

let db: TestDatabase;
let passwords: PasswordServer;
const PASSWORD = 'Zq-secret-pw-3141';

beforeAll(async () => {
  db = await createTestDatabase();
  passwords = await startPasswordServer();
}, 60_000);
afterAll(async () => {
  await db?.drop();
  await passwords?.stop();
});

describe.each(TRANSPORTS)('sources over $name', (transport) => {
  let api: Harness;
  const seen: string[] = [];
  beforeAll(async () => {
    api = await transport.start();
  });
  afterAll(async () => {
    await api.close();
  });

  const send = async (method: string, path: string, body?: object, token?: string): Promise<Response> => {
    const response = await api.request(path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      token,
    });
    seen.push(await response.clone().text());
    return response;
  };
  const create = async (body: object): Promise<Json> => {
    const response = await send('POST', '/sources', body);
    const json = (await response.json()) as Json;
    expect(response.status, JSON.stringify(json)).toBe(201);
    expect(response.headers.get('location')).toBe(`/sources/${json.id}`);
    return json;
  };
  // Names are unique in an organization: each source here gets its own unless a test names it.
  let made = 0;
  const postgres = (overrides: object = {}): object => ({
    connector: 'postgres',
    name: made++ === 0 ? 'shop' : `shop ${made}`,
    config: { port: db.port, database: db.database },
    host: db.host,
    user: db.reader,
    password: PASSWORD,
    ...overrides,
  });

  it('lists connectors with how they authenticate and whether POST /sources takes them', async () => {
    const body = (await (await send('GET', '/connectors')).json()) as Json;
    const byName = Object.fromEntries(body.data.map((c: Json) => [c.name, c]));
    expect(byName.postgres).toMatchObject({
      auth: 'key',
      syncs: true,
      live_test: true,
      accepted_by_post_sources: true,
    });
    expect(byName.sample).toMatchObject({ auth: 'none', accepted_by_post_sources: true, live_test: false });
    expect(byName.salesforce).toMatchObject({ auth: 'oauth', accepted_by_post_sources: false });
    expect(byName.internal_audit).toMatchObject({ staff_only: true, accepted_by_post_sources: false });
    expect(byName.postgresql).toMatchObject({ alias_of: 'postgres', accepted_by_post_sources: false });
    expect(byName.webhook_receiver).toMatchObject({ syncs: false, accepted_by_post_sources: false });
    expect(byName.postgres.fields.find((f: Json) => f.name === 'password')).toMatchObject({ credential: true });
  });

  it('creates a postgres source: 201, credentials kept but never shown, tables discovered with keys', async () => {
    const source = await create(postgres());
    expect(source).toMatchObject({
      object: 'source',
      id: expect.stringMatching(/^src_/),
      name: 'shop',
      connector: 'postgres',
      status: 'active',
      paused: false,
      config: { port: db.port, database: db.database, schemas: ['public'], ssl_mode: 'disable' },
      credentials: { host: 'set', user: 'set', password: 'set' },
      latest_sync: null,
    });
    expect(source.tables).toEqual([
      expect.objectContaining({
        schema: 'public',
        name: 'customers',
        enabled: true,
        mode: 'full',
        cursor_column: null,
        primary_key: ['customer_id'],
        estimated_rows: 50,
      }),
      expect.objectContaining({ schema: 'public', name: 'orders', primary_key: ['order_id'], estimated_rows: 200 }),
    ]);
    expect(source.tables[1].columns).toEqual([
      { name: 'order_id', type: 'bigint', nullable: false },
      { name: 'customer_id', type: 'integer', nullable: false },
      { name: 'total', type: 'numeric(10,2)', nullable: true },
      { name: 'updated_at', type: 'timestamp with time zone', nullable: false },
    ]);
    // At rest: sealed with AES-256-GCM; the key file is private.
    const row = (await api.home.db.get<{ secrets: string }>('SELECT secrets FROM sources WHERE id = ?', [
      source.id,
    ])) ?? { secrets: '' };
    expect(row.secrets).not.toContain(PASSWORD);
    expect(Buffer.from(row.secrets, 'base64').toString('latin1')).not.toContain(PASSWORD);
    expect(statSync(api.home.paths.secretsKey).mode & 0o777).toBe(0o600);
  });

  it('refuses invalid fields with invalid_source_parameters naming the field', async () => {
    const cases: [object, string][] = [
      [postgres({ surprise: 1 }), 'surprise'],
      [postgres({ config: { port: db.port, database: db.database, colour: 'red' } }), 'config.colour'],
      [postgres({ config: { port: db.port, database: db.database, password: 'x' } }), 'config.password'],
      [postgres({ host: undefined }), 'host'],
      [postgres({ config: { port: 'x', database: db.database } }), 'config.port'],
      [postgres({ config: { port: 70000, database: db.database } }), 'config.port'],
      [postgres({ config: { port: 0, database: db.database } }), 'config.port'],
      [postgres({ config: { port: db.port } }), 'config.database'],
      [postgres({ config: { port: db.port, database: db.database, ssl_mode: 'maybe' } }), 'config.ssl_mode'],
      [postgres({ config: { port: db.port, database: db.database, schemas: [] } }), 'config.schemas'],
      [postgres({ user: 42 }), 'user'],
      [postgres({ config: 'port=5432' }), 'config'],
      [postgres({ name: '' }), 'name'],
      [{ connector: 'sample', config: { scale: 0 } }, 'config.scale'],
    ];
    for (const [body, param] of cases) {
      const error = await expectError(
        await send('POST', '/sources', JSON.parse(JSON.stringify(body)) as object),
        400,
        'invalid_source_parameters',
        param,
      );
      expect(error.message.length).toBeGreaterThan(10);
    }
  });

  it('refuses OAuth, staff-only, legacy-alias, non-syncing and unknown connectors, saying why', async () => {
    const refused: [string, RegExp][] = [
      ['salesforce', /OAuth.*brokered authorization flow/],
      ['hubspot', /OAuth/],
      ['google_sheets', /OAuth/],
      ['internal_audit', /staff only/],
      ['postgresql', /legacy name.*'postgres'/],
      ['webhook_receiver', /does not sync/],
      ['nosuch', /no connector/],
    ];
    for (const [connector, why] of refused) {
      const error = await expectError(
        await send('POST', '/sources', { connector, config: {}, client_secret: 'oauth-secret-value' }),
        400,
        'invalid_source_parameters',
        'connector',
      );
      expect(error.message).toMatch(why);
      expect(error.message).not.toContain('oauth-secret-value');
    }
    await expectError(await send('POST', '/sources', { config: {} }), 400, 'invalid_source_parameters', 'connector');
  });

  it('lists sources newest first, each with its latest sync summary; reads one by id', async () => {
    const first = await create({ connector: 'sample', name: 'first' });
    const second = await create({ connector: 'sample', name: 'second', config: { scale: 2 } });
    const list = (await (await send('GET', '/sources')).json()) as Json;
    const ids = list.data.map((s: Json) => s.id);
    expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
    expect(list.data.every((s: Json) => 'latest_sync' in s)).toBe(true);
    const got = (await (await send('GET', `/sources/${second.id}`)).json()) as Json;
    expect(got).toMatchObject({ id: second.id, config: { scale: 2 }, credentials: {} });
    expect(got.tables.map((t: Json) => `${t.schema}.${t.name}`)).toEqual([
      'billing.accounts',
      'billing.invoices',
      'billing.payments',
    ]);
  });

  it('PATCH changes configuration, credentials, tables and paused; conflicting changes get 409', async () => {
    const source = await create(postgres());
    const renamed = (await (
      await send('PATCH', `/sources/${source.id}`, {
        name: `renamed ${made}`,
        config: { schemas: ['public'] },
        password: 'new-password-xyz',
      })
    ).json()) as Json;
    expect(renamed).toMatchObject({
      name: `renamed ${made}`,
      credentials: { host: 'set', user: 'set', password: 'set' },
    });
    const tables = (await (
      await send('PATCH', `/sources/${source.id}`, {
        tables: [
          { schema: 'public', name: 'orders', mode: 'incremental', cursor_column: 'updated_at' },
          { schema: 'public', name: 'customers', enabled: false },
        ],
      })
    ).json()) as Json;
    expect(tables.tables).toEqual([
      expect.objectContaining({ name: 'customers', enabled: false }),
      expect.objectContaining({
        name: 'orders',
        mode: 'incremental',
        cursor_column: 'updated_at',
        primary_key: ['order_id'],
      }),
    ]);
    await expectError(
      await send('PATCH', `/sources/${source.id}`, { tables: [{ schema: 'public', name: 'nope' }] }),
      400,
      'invalid_source_parameters',
      'tables[0].name',
    );
    await expectError(
      await send('PATCH', `/sources/${source.id}`, {
        tables: [{ schema: 'public', name: 'customers', mode: 'incremental' }],
      }),
      400,
      'invalid_source_parameters',
      'tables[0].cursor_column',
    );
    await expectError(
      await send('PATCH', `/sources/${source.id}`, {
        tables: [{ schema: 'public', name: 'customers', cursor_column: 'nope' }],
      }),
      400,
      'invalid_source_parameters',
      'tables[0].cursor_column',
    );
    // A key naming a column twice, and one table changed twice in one request (which change wins?), are refused.
    await expectError(
      await send('PATCH', `/sources/${source.id}`, {
        tables: [{ schema: 'public', name: 'orders', primary_key: ['order_id', 'order_id'] }],
      }),
      400,
      'invalid_source_parameters',
      'tables[0].primary_key',
    );
    await expectError(
      await send('PATCH', `/sources/${source.id}`, {
        tables: [
          { schema: 'public', name: 'customers', enabled: true },
          { schema: 'public', name: 'customers', enabled: false },
        ],
      }),
      400,
      'invalid_source_parameters',
      'tables[1].name',
    );
    await expectError(
      await send('PATCH', `/sources/${source.id}`, { paused: 'yes' }),
      400,
      'invalid_source_parameters',
      'paused',
    );
    await expectError(
      await send('PATCH', `/sources/${source.id}`, { connector: 'sample' }),
      400,
      'invalid_source_parameters',
      'connector',
    );

    expect((await (await send('PATCH', `/sources/${source.id}`, { paused: true })).json()) as Json).toMatchObject({
      paused: true,
      status: 'paused',
    });
    expect((await (await send('PATCH', `/sources/${source.id}`, { paused: false })).json()) as Json).toMatchObject({
      paused: false,
      status: 'active',
    });

    // With a sync of the source running, a pause cannot be applied and other changes conflict.
    const jobs = new JobStore(api.home.db);
    const syncId = `sync_${source.id.slice(4)}`;
    await api.home.db.transaction('test:sync', async () => {
      await jobs.create({
        id: syncId,
        organizationId: api.home.organization.id,
        kind: 'sync',
        principalId: api.home.owner.id,
        credentialId: 'x',
        lease: { owner: 'test', expiresMs: Date.now() + 60_000 },
      });
      await api.home.db.run('INSERT INTO syncs (id, source_id, created) VALUES (?, ?, ?)', [syncId, source.id, 0]);
    });
    await expectError(await send('PATCH', `/sources/${source.id}`, { paused: true }), 409, 'source_pause_failed');
    await expectError(
      await send('PATCH', `/sources/${source.id}`, { name: 'during sync' }),
      409,
      'source_config_unavailable',
    );
    await jobs.finish(syncId, 'succeeded');
    expect((await send('PATCH', `/sources/${source.id}`, { paused: true })).status).toBe(200);
  });

  it('DELETE is a soft delete: the source vanishes from every route, its data stays', async () => {
    const source = await create({ connector: 'sample', name: 'doomed' });
    const deleted = await send('DELETE', `/sources/${source.id}`);
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toEqual({
      object: 'source_deletion',
      id: source.id,
      deleted: true,
      data_retained: true,
    });
    for (const [method, path, body] of [
      ['GET', `/sources/${source.id}`],
      ['PATCH', `/sources/${source.id}`, { name: 'x' }],
      ['DELETE', `/sources/${source.id}`],
      ['POST', `/sources/${source.id}/test`],
    ] as [string, string, object?][]) {
      await expectError(await send(method, path, body), 404, 'source_not_found');
    }
    expect(
      ((await (await send('GET', '/sources?limit=100')).json()) as Json).data.map((s: Json) => s.id),
    ).not.toContain(source.id);
    const row = (await api.home.db.get<{ deleted: number }>('SELECT deleted FROM sources WHERE id = ?', [
      source.id,
    ])) ?? { deleted: null };
    expect(row.deleted).toEqual(expect.any(Number));
  });

  it('404 source_not_found for unknown ids and other organizations', async () => {
    await expectError(await send('GET', '/sources/src_unknown'), 404, 'source_not_found');
    const mine = await create({ connector: 'sample' });
    const rival = await api.home.directory.createOrganization('Rival');
    const owner = await api.home.directory.createUser(rival.id, 'R', 'owner');
    const token = (
      await api.home.credentials.issue({
        kind: 'pat',
        organizationId: rival.id,
        userId: owner.id,
        name: 'r',
        scopes: ['data:read', 'apps:manage'],
      })
    ).secret;
    await expectError(await send('GET', `/sources/${mine.id}`, undefined, token), 404, 'source_not_found');
    await expectError(await send('DELETE', `/sources/${mine.id}`, undefined, token), 404, 'source_not_found');
  });

  it('scopes: data:read reads, apps:manage creates, changes, tests and deletes', async () => {
    const issue = async (scopes: string[]) =>
      (
        await api.home.credentials.issue({
          kind: 'pat',
          organizationId: api.home.organization.id,
          userId: api.home.owner.id,
          name: 's',
          scopes: scopes as never,
        })
      ).secret;
    const reader = await issue(['data:read']);
    const manager = await issue(['apps:manage']);
    const source = await create({ connector: 'sample' });
    expect((await send('GET', `/sources/${source.id}`, undefined, reader)).status).toBe(200);
    expect((await send('GET', '/sources', undefined, reader)).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/sources', { connector: 'sample' }],
      ['PATCH', `/sources/${source.id}`, { paused: true }],
      ['POST', `/sources/${source.id}/test`],
      ['DELETE', `/sources/${source.id}`],
    ] as [string, string, object?][]) {
      const error = await expectError(await send(method, path, body, reader), 403, 'missing_scope');
      expect(error.message).toContain('apps:manage');
    }
    await expectError(await send('GET', '/sources', undefined, manager), 403, 'missing_scope');
    expect((await send('POST', `/sources/${source.id}/test`, undefined, manager)).status).toBe(200);
  });

  describe('connection tests against the real PostgreSQL', () => {
    const testOf = async (body: object): Promise<Json> => {
      const source = await create(body);
      const response = await send('POST', `/sources/${source.id}/test`);
      expect(response.status).toBe(200);
      return (await response.json()) as Json;
    };

    it('good credentials: ok', async () => {
      expect(await testOf(postgres())).toMatchObject({
        object: 'source_test',
        supported: true,
        ok: true,
        reason: null,
      });
    });

    it('wrong password: authentication_failed', async () => {
      const body = postgres({
        config: { port: passwords.port, database: 'postgres' },
        host: 'localhost',
        user: passwords.user,
        password: 'not-the-password',
      });
      expect(await testOf(body)).toMatchObject({ supported: true, ok: false, reason: 'authentication_failed' });
      const right = postgres({
        config: { port: passwords.port, database: 'postgres' },
        host: 'localhost',
        user: passwords.user,
        password: passwords.password,
      });
      expect(await testOf(right)).toMatchObject({ ok: true });
    });

    it('closed port: unreachable', async () => {
      expect(await testOf(postgres({ config: { port: await freePort(), database: db.database } }))).toMatchObject({
        ok: false,
        reason: 'unreachable',
      });
    });

    it('missing database: database_not_found', async () => {
      expect(await testOf(postgres({ config: { port: db.port, database: `${db.database}_missing` } }))).toMatchObject({
        ok: false,
        reason: 'database_not_found',
      });
    });

    it('missing table privilege: permission_denied', async () => {
      expect(await testOf(postgres({ user: db.limited }))).toMatchObject({ ok: false, reason: 'permission_denied' });
    });

    it('credentials sealed with another key (a replica given the wrong key file): 503 with what to fix, never a 500; a sync fails saying so', async () => {
      const source = await create(postgres());
      const otherKey = new SecretBox(secretsKeyFile(join(tempDir('lake-other-key'), 'secrets.key')));
      await api.home.db.run('UPDATE sources SET secrets = ? WHERE id = ?', [
        otherKey.seal(source.id, { host: db.host, user: db.reader, password: PASSWORD }),
        source.id,
      ]);
      const response = await send('POST', `/sources/${source.id}/test`);
      const body = await expectError(response, 503, 'service_unavailable');
      expect(body.message).toMatch(/not the key that sealed them.*LAKE_SECRETS_KEY_FILE/);
      expect(response.headers.get('retry-after')).toBe('2');
      const sync = (await (await send('POST', `/sources/${source.id}/sync`, {})).json()) as Json;
      let job: Json = {};
      for (let i = 0; i < 100 && !['succeeded', 'failed'].includes(job.status); i++) {
        await new Promise((r) => setTimeout(r, 50));
        job = (await (await send('GET', `/jobs/${sync.id}`)).json()) as Json;
      }
      expect(job).toMatchObject({ status: 'failed', error: { code: 'sync_failed' } });
      expect(job.error.message).toMatch(/LAKE_SECRETS_KEY_FILE/);
    });

    it('connectors without a live test: supported false', async () => {
      expect(await testOf({ connector: 'sample' })).toMatchObject({ supported: false, ok: false });
    });

    it('no response, log line or error said the password, the username or the hostname', async () => {
      const secrets = [
        PASSWORD,
        'not-the-password',
        'new-password-xyz',
        passwords.password,
        db.reader,
        db.limited,
        'localhost',
      ];
      const everything = [...seen, ...api.logs.map((l) => JSON.stringify(l))].join('\n');
      for (const secret of secrets) expect(everything, secret).not.toContain(secret);
      const stored =
        TEST_STORE === 'sqlite'
          ? readFileSync(join(api.home.paths.root, 'metadata.sqlite')).toString('latin1')
          : JSON.stringify([
              await api.home.db.all('SELECT * FROM sources'),
              await api.home.db.all('SELECT * FROM job_events'),
              await api.home.db.all('SELECT * FROM source_logs'),
            ]);
      expect(stored).not.toContain(PASSWORD);
    });
  });
});
