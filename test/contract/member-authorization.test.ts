import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobStore } from '../../src/service/jobs/job-store.js';
import type { Scope } from '../../src/service/auth/scopes.js';
import { SERVE_DENY } from '../../src/service/net/outbound.js';
import pg from 'pg';
import { JOB_STREAM_TIMING } from '../../src/service/jobs/stream-timing.js';
import { ADMIN_URL, createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { startPasswordHarvester } from '../helpers/fake-postgres.js';
import { inMemory, type Harness } from '../helpers/transports.js';
import { expectError, type Json } from '../helpers/queries.js';
import { readSse } from '../helpers/sse.js';

/** A webhook receiver on 127.0.0.1 that keeps every body it is sent. */
async function startReceiver(): Promise<{ url: string; bodies: string[]; close: () => Promise<void> }> {
  const bodies: string[] = [];
  const server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      bodies.push(body);
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Inside one organization, as a restricted member would try it: a role `member`, table permissions on, a grant on
 * one table, tokens with apps:manage, sends:manage, data:read. Each finding of the review is tried here and must
 * not get through.
 */
describe('a member gets exactly what they were granted', () => {
  let api: Harness;
  let db: TestDatabase;
  let org: string;
  let memberUserId: string;
  const PASSWORD = 'Owner-Stored-Pw-9931';
  const patFor = async (userId: string, scopes: Scope[]): Promise<string> =>
    (await api.home.credentials.issue({ kind: 'pat', organizationId: org, userId, name: 'm', scopes })).secret;
  let member: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    api = await inMemory.start();
    org = api.home.organization.id;
    memberUserId = (await api.home.directory.createUser(org, 'Member', 'member')).id;
    member = await patFor(memberUserId, [
      'apps:manage',
      'data:read',
      'sends:manage',
      'sends:read',
      'canvases:read',
      'canvases:manage',
      'query:read',
      'jobs:read',
      'logs:read',
    ]);
    await api.services.lake.writeTable(org, 'shopa', 'payroll', "select '078-05-1120' as ssn, 250000 as salary");
    await api.services.permissions.setEnabled(org, true);
    await api.services.permissions.grant(org, 'demo', 'orders', 'user', memberUserId);
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });

  const call = async (method: string, path: string, body?: object, token?: string): Promise<Response> =>
    api.request(path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      token,
    });
  const ok = async (response: Response, status = 200): Promise<Json> => {
    const json = (await response.json()) as Json;
    expect(response.status, JSON.stringify(json)).toBe(status);
    return json;
  };
  /** A source over the test database as its reading role, created by the owner (no password kept). */
  const readerSource = async (name: string): Promise<Json> =>
    ok(
      await call('POST', '/sources', {
        connector: 'postgres',
        name,
        config: { port: db.port, database: db.database },
        host: db.host,
        user: db.reader,
      }),
      201,
    );

  describe('1. a stored password never follows a source elsewhere', () => {
    it('moving a source (port, host, database, user, TLS) drops its password unless the same request gives it again', async () => {
      const harvester = await startPasswordHarvester();
      try {
        const source = await ok(
          await call('POST', '/sources', {
            connector: 'postgres',
            name: 'owners',
            config: { port: db.port, database: db.database },
            host: db.host,
            user: db.reader,
            password: PASSWORD,
          }),
          201,
        );
        // The member points the owner's source at their listener and tests it.
        await ok(await call('PATCH', `/sources/${source.id}`, { config: { port: harvester.port } }, member));
        await ok(await call('POST', `/sources/${source.id}/test`, {}, member));
        expect(harvester.received).not.toContain(PASSWORD);
        // The password is gone, not hidden: moving the source back does not bring it back.
        await ok(await call('PATCH', `/sources/${source.id}`, { config: { port: db.port } }, member));
        const shown = await ok(await call('GET', `/sources/${source.id}`));
        expect(JSON.stringify(shown)).not.toContain(PASSWORD);
        expect(shown.credentials).toEqual({ host: 'set', user: 'set' });

        // Each destination field moves it; a change that gives the password again keeps the new one.
        for (const change of [
          { host: '127.0.0.1' },
          { user: 'someone_else' },
          { config: { database: 'other_db' } },
          { config: { ssl_mode: 'require' } },
        ]) {
          const again = await ok(
            await call('POST', '/sources', {
              connector: 'postgres',
              name: `o ${JSON.stringify(change)}`,
              config: { port: db.port, database: db.database },
              host: 'localhost',
              user: db.reader,
              password: PASSWORD,
            }),
            201,
          );
          await ok(
            await call(
              'PATCH',
              `/sources/${again.id}`,
              { ...change, config: { ...('config' in change ? change.config : {}), port: harvester.port } },
              member,
            ),
          );
          await call('POST', `/sources/${again.id}/test`, {}, member);
        }
        expect(harvester.received).not.toContain(PASSWORD);
        const kept = await ok(
          await call('POST', '/sources', {
            connector: 'postgres',
            name: 'given again',
            config: { port: db.port, database: db.database },
            host: db.host,
            user: db.reader,
            password: PASSWORD,
          }),
          201,
        );
        await ok(
          await call('PATCH', `/sources/${kept.id}`, {
            config: { port: harvester.port },
            password: 'the-new-one-for-here',
          }),
        );
        await call('POST', `/sources/${kept.id}/test`, {});
        expect(harvester.received.filter(Boolean)).toEqual(['the-new-one-for-here']);
        // A change that does not move the source (its name, its tables, the same port) keeps the password.
        const same = await ok(
          await call('POST', '/sources', {
            connector: 'postgres',
            name: 'unmoved',
            config: { port: harvester.port, database: db.database },
            host: db.host,
            user: db.reader,
            password: 'kept-for-same-place',
          }),
          201,
        );
        await ok(await call('PATCH', `/sources/${same.id}`, { name: 'renamed', config: { port: harvester.port } }));
        await call('POST', `/sources/${same.id}/test`, {});
        expect(harvester.received).toContain('kept-for-same-place');
      } finally {
        await harvester.stop();
      }
    }, 60_000);
  });

  describe('3. a source writes only into its own lake schema', () => {
    const syncAndWait = async (sourceId: string, token?: string): Promise<Json> => {
      const accepted = await ok(await call('POST', `/sources/${sourceId}/sync`, {}, token), 202);
      for (let i = 0; i < 400; i++) {
        const job = await ok(await call('GET', `/jobs/${accepted.id}`));
        if (job.status !== 'queued' && job.status !== 'running') return job;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('sync did not end');
    };

    it("names are unique once normalized, and never lead into another source's, a reserved or an existing schema", async () => {
      const owners = await ok(
        await call('POST', '/sources', {
          connector: 'postgres',
          name: 'shop',
          config: { port: db.port, database: db.database },
          host: db.host,
          user: db.reader,
        }),
        201,
      );
      expect(owners.lake_schema).toBe('shop');
      expect((await syncAndWait(owners.id)).status).toBe('succeeded');
      for (const name of [
        'shop',
        'SHOP',
        'shop ',
        ' Shop!',
        'Ｓｈｏｐ',
        'shöp',
        'demo',
        'Views',
        'information_schema',
        '!!!',
      ]) {
        await expectError(
          await call(
            'POST',
            '/sources',
            {
              connector: 'postgres',
              name,
              config: { port: db.port, database: db.database },
              host: db.host,
              user: db.reader,
            },
            member,
          ),
          409,
          'source_name_conflict',
        );
      }
      // A schema the lake already has (an operator's table) is not a new source's either.
      await api.services.lake.writeTable(org, 'finance', 'ledger', 'select 1 as x');
      await expectError(
        await call('POST', '/sources', { connector: 'sample', name: 'Finance' }, member),
        409,
        'source_name_conflict',
      );
      // A rename may not take another's name; the source keeps its schema when renamed.
      const members = await ok(await call('POST', '/sources', { connector: 'sample', name: 'my sample' }, member), 201);
      await expectError(
        await call('PATCH', `/sources/${members.id}`, { name: 'SHOP' }, member),
        409,
        'source_name_conflict',
      );
      const renamed = await ok(await call('PATCH', `/sources/${members.id}`, { name: 'my renamed sample' }, member));
      expect(renamed.lake_schema).toBe('my_sample');
      // A deleted source's tables stay, and so does its hold on their schema.
      await ok(await call('DELETE', `/sources/${owners.id}`));
      await expectError(
        await call(
          'POST',
          '/sources',
          {
            connector: 'postgres',
            name: 'shop',
            config: { port: db.port, database: db.database },
            host: db.host,
            user: db.reader,
          },
          member,
        ),
        409,
        'source_name_conflict',
      );
    }, 60_000);

    it('a source made before names were unique cannot sync into the schema an older source holds', async () => {
      const first = await ok(await call('POST', '/sources', { connector: 'sample', name: 'twin' }), 201);
      expect((await syncAndWait(first.id)).status).toBe('succeeded');
      // As an older version of lake allowed it: a second source of the same name.
      const second = await ok(
        await call('POST', '/sources', { connector: 'sample', name: 'twin b', config: { scale: 2 } }, member),
        201,
      );
      await api.home.db.run("UPDATE sources SET name = 'twin', destination_schema = NULL WHERE id = ?", [second.id]);
      const refused = await syncAndWait(second.id, member);
      expect(refused).toMatchObject({ status: 'failed', error: { code: 'source_name_conflict' } });
      const count = (await api.services.lake.tables.get(org, 'twin', 'accounts'))?.snapshot.rowCount;
      expect((await syncAndWait(first.id)).status).toBe('succeeded');
      expect((await api.services.lake.tables.get(org, 'twin', 'accounts'))?.snapshot.rowCount).toBe(count);
    }, 60_000);
  });

  describe('4. a restricted credential sees exactly what the catalog shows it, on every endpoint', () => {
    it('sources, sync objects and streams, jobs, sends, canvases and logs leave out the tables it may not read', async () => {
      const reader = await patFor(memberUserId, [
        'data:read',
        'sends:read',
        'canvases:read',
        'logs:read',
        'jobs:read',
        'query:read',
      ]);
      const source = await readerSource('crm');
      await api.services.permissions.grant(org, 'crm', 'orders', 'user', memberUserId);
      const accepted = await ok(await call('POST', `/sources/${source.id}/sync`, {}), 202);
      const events = await readSse(await api.request(`/sources/${source.id}/sync/stream`, { token: reader }), (items) =>
        items.some((i) => i.event === 'job.succeeded' || i.event === 'job.failed'),
      );
      expect(events.some((e) => e.event === 'sync.progress')).toBe(true);
      expect(
        events
          .filter((e) => e.event?.startsWith('sync.'))
          .every((e) => !JSON.stringify(e.data ?? {}).includes('customers')),
      ).toBe(true);
      const ownerEvents = await readSse(await api.request(`/jobs/${accepted.id}/events`), (items) =>
        items.some((i) => i.event === 'job.succeeded' || i.event === 'job.failed'),
      );
      expect(ownerEvents.some((e) => JSON.stringify(e.data ?? {}).includes('customers'))).toBe(true);

      const seen = await ok(await call('GET', `/sources/${source.id}`, undefined, reader));
      expect(seen.tables.map((t: Json) => t.name)).toEqual(['orders']);
      expect(seen.latest_sync.tables.map((t: Json) => t.table)).toEqual(['public.orders']);
      expect(seen.latest_sync.rows).toBe(200);
      const listed = await ok(await call('GET', '/sources?limit=100', undefined, reader));
      const everywhere = JSON.stringify(listed);
      expect(everywhere).not.toContain('customers');
      expect(everywhere).not.toContain('payroll');
      const full = await ok(await call('GET', `/sources/${source.id}`));
      expect(full.tables.map((t: Json) => t.name).sort()).toEqual(['customers', 'orders']);

      // Sends and canvases whose SQL names a hidden table are not shown to it; canvases show only readable elements.
      const hiddenSend = await ok(
        await call('POST', '/sends', {
          name: 'payroll feed',
          sql: 'select * from shopa.payroll',
          destination: { type: 'webhook', url: 'http://127.0.0.1:9/x' },
        }),
        201,
      );
      const openSend = await ok(
        await call('POST', '/sends', {
          name: 'orders feed',
          sql: 'select count(*) from crm.orders',
          destination: { type: 'webhook', url: 'http://127.0.0.1:9/x' },
        }),
        201,
      );
      const sends = await ok(await call('GET', '/sends?limit=100', undefined, reader));
      expect(sends.data.map((s: Json) => s.id)).toContain(openSend.id);
      expect(JSON.stringify(sends)).not.toContain('payroll');
      await expectError(await call('GET', `/sends/${hiddenSend.id}`, undefined, reader), 404, 'send_not_found');
      await expectError(await call('GET', `/sends/${hiddenSend.id}/runs`, undefined, reader), 404, 'send_not_found');
      const canvas = await ok(
        await call('POST', '/canvases', {
          name: 'mixed',
          elements: [
            { name: 'pay', sql: 'select ssn from shopa.payroll' },
            { name: 'orders', table: 'crm.orders' },
          ],
        }),
        201,
      );
      const shownCanvas = await ok(await call('GET', `/canvases/${canvas.id}`, undefined, reader));
      expect(shownCanvas.elements.map((e: Json) => e.name)).toEqual(['orders']);
      expect(JSON.stringify(await ok(await call('GET', '/canvases?limit=100', undefined, reader)))).not.toContain(
        'payroll',
      );

      // Logs about a hidden table are left out; a failed sync's reason names no table to it.
      await api.services.syncs.store.log(
        org,
        source.id,
        'schema_change',
        'public.customers',
        'Table public.customers changed: +secret_column',
        {},
      );
      await api.services.syncs.store.log(
        org,
        source.id,
        'schema_change',
        'public.orders',
        'Table public.orders changed: +note',
        {},
      );
      const logs = await ok(await call('GET', `/logs?source=${source.id}`, undefined, reader));
      expect(logs.data.map((e: Json) => e.table)).toEqual(['public.orders']);
      await api.home.db.run(
        "UPDATE jobs SET status = 'failed', error_code = 'tables_failed', error_message = '1 of 2 tables failed: public.customers (boom)' WHERE id = ?",
        [accepted.id],
      );
      const job = await ok(await call('GET', `/jobs/${accepted.id}`));
      expect(job.error.message).toContain('customers');
      const again = await ok(await call('GET', `/sources/${source.id}`, undefined, reader));
      expect(JSON.stringify(again)).not.toContain('customers');
      // The final event says the same: its error (nested in the event) names no hidden table to the reader.
      const jobStore = new JobStore(api.services.home.db);
      const before = await jobStore.lastSeq(accepted.id);
      await jobStore.appendEvent(accepted.id, 'job.failed', {
        status: 'failed',
        error: { code: 'tables_failed', message: '1 of 2 tables failed: public.customers (boom)' },
      });
      const ended = (items: { event?: string }[]): boolean => items.filter((i) => i.event === 'job.failed').length > 0;
      // (The job's own stream is its starter's: the member gets 404 there.)
      for (const [path, lastId] of [[`/sources/${source.id}/sync/stream`, `${accepted.id}:${before}`]]) {
        const response = await api.request(path as string, {
          token: reader,
          headers: { 'Last-Event-ID': lastId as string },
        });
        expect(response.status, await response.clone().text()).toBe(200);
        const seen = await readSse(response, ended);
        const failed = seen.filter((i) => i.event === 'job.failed').pop();
        expect(failed?.data).toMatchObject({ error: { code: 'tables_failed' } });
        expect(JSON.stringify(failed), path).not.toContain('customers');
      }
    }, 60_000);
    it('a sync stream open while a grant is revoked leaves out that table from then on', async () => {
      const reader = await patFor(memberUserId, ['data:read', 'jobs:read']);
      // A table of the source whose rows can be read only while the test does not hold an advisory lock (a row
      // security policy waits for it): its rows come when the test says.
      const gate = new pg.Client({ connectionString: new URL(`/${db.database}`, ADMIN_URL).toString() });
      await gate.connect();
      await gate.query(
        `CREATE TABLE public.gated (id integer PRIMARY KEY);
         INSERT INTO public.gated VALUES (1), (2);
         ALTER TABLE public.gated ENABLE ROW LEVEL SECURITY;
         CREATE POLICY gate ON public.gated USING (pg_advisory_xact_lock_shared(4242) IS NOT NULL);
         GRANT SELECT ON public.gated TO ${db.reader}`,
      );
      await gate.query('SELECT pg_advisory_lock(4242)');
      try {
        const source = await readerSource('crm later');
        const schema = source.lake_schema as string;
        for (const table of ['orders', 'gated'])
          await api.services.permissions.grant(org, schema, table, 'user', memberUserId);
        await ok(await call('POST', `/sources/${source.id}/sync`, {}), 202);
        let revokedAt = Infinity;
        let released: Promise<unknown> | undefined;
        const stream = await api.request(`/sources/${source.id}/sync/stream`, { token: reader });
        const opened = performance.now();
        const events = await readSse(stream, (items) => {
          // Once the member has seen the held table's read begin (its rows wait on the lock):
          if (!released && items.some((i) => i.event === 'sync.progress' && JSON.stringify(i.data).includes('gated')))
            released = (async () => {
              await api.services.permissions.revoke(org, schema, 'gated', 'user', memberUserId);
              revokedAt = performance.now() - opened;
              // Past the stream's next state check, the view's rows are let through.
              await new Promise((resolve) => setTimeout(resolve, JOB_STREAM_TIMING.pollMs + 500));
              await gate.query('SELECT pg_advisory_unlock(4242)');
            })();
          return items.some((i) => i.event === 'job.succeeded' || i.event === 'job.failed');
        });
        await released;
        expect(events.filter((e) => e.event?.startsWith('job.')).pop()?.event).toBe('job.succeeded');
        const later = events.filter((e) => e.kind === 'event' && e.at > revokedAt + JOB_STREAM_TIMING.pollMs);
        expect(later.length).toBeGreaterThan(0);
        // Before, the stream kept the view of the grants it opened with: the view's progress still reached the member.
        expect(later.filter((e) => JSON.stringify(e.data ?? {}).includes('gated'))).toEqual([]);
        expect(JSON.stringify(events.filter((e) => e.at < revokedAt))).toContain('gated');
      } finally {
        await gate.query('SELECT pg_advisory_unlock_all(); DROP TABLE IF EXISTS public.gated');
        await gate.end();
      }
    }, 60_000);
  });

  describe('2. a send runs as its creator, so only its creator or an owner changes or runs it', () => {
    it("a member can neither rewrite, run, pause, resume nor delete the owner's send, nor save SQL they may not read", async () => {
      const receiver = await startReceiver();
      try {
        const owners = await ok(
          await call('POST', '/sends', {
            name: 'owner report',
            sql: 'select count(*) as n from lake.demo.orders',
            destination: { type: 'webhook', url: receiver.url },
          }),
          201,
        );
        const path = `/sends/${owners.id}`;
        await expectError(
          await call('PATCH', path, { sql: 'select ssn, salary from shopa.payroll' }, member),
          403,
          'creator_required',
        );
        for (const change of [
          { paused: true },
          { paused: false },
          { name: 'mine now' },
          { schedule: { every_minutes: 1 } },
        ]) {
          await expectError(await call('PATCH', path, change, member), 403, 'creator_required');
        }
        await expectError(await call('POST', `${path}/run`, {}, member), 403, 'creator_required');
        await expectError(await call('DELETE', path, undefined, member), 403, 'creator_required');
        const unchanged = await ok(await call('GET', path, undefined, member));
        expect(unchanged).toMatchObject({
          name: 'owner report',
          sql: 'select count(*) as n from lake.demo.orders',
          paused: false,
        });
        expect(receiver.bodies).toEqual([]);

        // The member's own sends: only what the member may read.
        await expectError(
          await call(
            'POST',
            '/sends',
            {
              name: 'steal',
              sql: 'select ssn, salary from shopa.payroll',
              destination: { type: 'webhook', url: receiver.url },
            },
            member,
          ),
          403,
          'grant_table_denied',
        );
        const mine = await ok(
          await call(
            'POST',
            '/sends',
            {
              name: 'mine',
              sql: 'select count(*) as n from lake.demo.orders',
              destination: { type: 'webhook', url: receiver.url },
            },
            member,
          ),
          201,
        );
        await expectError(
          await call('PATCH', `/sends/${mine.id}`, { sql: 'select * from shopa.payroll' }, member),
          403,
          'grant_table_denied',
        );
        await ok(await call('PATCH', `/sends/${mine.id}`, { name: 'mine, renamed', paused: true }, member));
        await ok(await call('PATCH', `/sends/${mine.id}`, { paused: false }, member));
        // An owner may change anyone's send; changing its SQL makes the owner the one it runs as.
        await ok(await call('PATCH', `/sends/${mine.id}`, { sql: 'select 7 as seven' }));
        expect((await api.services.sends.store.get(org, mine.id))?.principalId).toBe(api.home.owner.id);
        await expectError(await call('POST', `/sends/${mine.id}/run`, {}, member), 403, 'creator_required');
        await ok(await call('DELETE', `/sends/${mine.id}`));
      } finally {
        await receiver.close();
      }
    });

    it("a member adds nothing to another's canvas, and puts on their own only tables they may read", async () => {
      const owners = await ok(
        await call('POST', '/canvases', { name: 'board', elements: [{ name: 'pay', table: 'shopa.payroll' }] }),
        201,
      );
      await expectError(
        await call('POST', `/canvases/${owners.id}/elements`, { name: 'x', sql: 'select 1' }, member),
        403,
        'creator_required',
      );
      await expectError(
        await call(
          'POST',
          '/canvases',
          { name: 'leak', elements: [{ name: 'pay', sql: 'select * from shopa.payroll' }] },
          member,
        ),
        403,
        'grant_table_denied',
      );
      await expectError(
        await call('POST', '/canvases', { name: 'leak', elements: [{ name: 'pay', table: 'shopa.payroll' }] }, member),
        403,
        'grant_table_denied',
      );
      const mine = await ok(
        await call('POST', '/canvases', { name: 'mine', elements: [{ name: 'orders', table: 'demo.orders' }] }, member),
        201,
      );
      await expectError(
        await call(
          'POST',
          `/canvases/${mine.id}/elements`,
          { name: 'pay', sql: 'select ssn from lake.shopa.payroll' },
          member,
        ),
        403,
        'grant_table_denied',
      );
      await ok(
        await call(
          'POST',
          `/canvases/${mine.id}/elements`,
          { name: 'n', sql: 'select count(*) from demo.orders' },
          member,
        ),
        201,
      );
      await ok(await call('POST', `/canvases/${mine.id}/elements`, { name: 'by owner', sql: 'select 1' }), 201);
    });
  });
});

describe("5. outbound connections follow the server's rules", () => {
  let api: Harness;
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    // lake serve's defaults, plus a loopback address refused by the operator, to see the refusal ignore what listens.
    api = await inMemory.start({
      services: {
        outbound: {
          sources: { allow: [], deny: [...SERVE_DENY, '127.0.0.0/8'] },
          destinations: { allow: [], deny: SERVE_DENY },
        },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await db?.drop();
  });
  const call = async (method: string, path: string, body?: object): Promise<Response> =>
    api.request(path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    });

  it('refuses link-local, metadata and Unix-socket targets, and answers the same whatever listens there', async () => {
    for (const host of [
      '169.254.169.254',
      '::ffff:169.254.169.254',
      'fe80::1',
      'metadata.google.internal',
      '/var/run/postgresql',
      '/tmp',
      '0.0.0.0',
    ]) {
      const refused = await call('POST', '/sources', {
        connector: 'postgres',
        name: `m ${host}`,
        config: { port: 5432, database: 'postgres' },
        host,
        user: 'postgres',
      });
      await expectError(refused, 403, 'host_not_allowed');
    }
    // A refused address answers the same, at once, for a port where PostgreSQL listens and one where nothing does.
    const answers: string[] = [];
    for (const port of [db.port, 1]) {
      const started = Date.now();
      const refused = await call('POST', '/sources', {
        connector: 'postgres',
        name: `scan ${port}`,
        config: { port, database: db.database },
        host: '127.0.0.1',
        user: db.reader,
      });
      const error = ((await refused.json()) as Json).error;
      answers.push(`${refused.status} ${error.code} ${error.message}`);
      expect(Date.now() - started).toBeLessThan(1000);
    }
    expect(answers[0]).toBe(answers[1]);
    // Pointing an allowed source at a refused host is refused too, and so is a send to a refused receiver.
    const allowed = (await (
      await call('POST', '/sources', {
        connector: 'postgres',
        name: 'by name',
        config: { port: db.port, database: db.database },
        host: 'localhost.invalid',
        user: db.reader,
      })
    ).json()) as Json;
    await expectError(
      await call('PATCH', `/sources/${allowed.id}`, { host: '169.254.169.254' }),
      403,
      'host_not_allowed',
    );
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]/',
      'http://metadata.google.internal/computeMetadata/v1/',
    ]) {
      await expectError(
        await call('POST', '/sends', { name: 'exfil', sql: 'select 1', destination: { type: 'webhook', url } }),
        403,
        'host_not_allowed',
      );
    }
    await expectError(
      await call('POST', '/sends', {
        name: 'exfil db',
        sql: 'select 1',
        destination: {
          type: 'postgres',
          host: '169.254.169.254',
          user: 'x',
          database: 'd',
          table: 't',
          mode: 'replace',
        },
      }),
      403,
      'host_not_allowed',
    );
  });

  it('an allow list admits only what it names', async () => {
    const strict = await inMemory.start({
      services: {
        outbound: {
          sources: { allow: ['10.0.0.0/8', 'db.internal.example'], deny: SERVE_DENY },
          destinations: { allow: [], deny: SERVE_DENY },
        },
      },
    });
    try {
      const refused = await strict.request('/sources', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          connector: 'postgres',
          name: 'local',
          config: { port: db.port, database: db.database },
          host: '127.0.0.1',
          user: db.reader,
        }),
      });
      await expectError(refused, 403, 'host_not_allowed');
      const ten = await strict.request('/sources', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          connector: 'postgres',
          name: 'ten',
          config: { port: 1, database: 'd' },
          host: '10.255.255.1',
          user: 'u',
        }),
      });
      expect(ten.status).toBe(201);
    } finally {
      await strict.close();
    }
  });
});
