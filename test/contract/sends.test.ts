import { newMember } from '../helpers/members.js';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { secretsKeyFile } from '../../src/service/home/key-files.js';
import { SecretBox } from '../../src/service/sources/secret-box.js';
import { manualClock } from '../helpers/clock.js';
import { tempDir } from '../helpers/temp.js';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { expectError, type Json } from '../helpers/queries.js';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { waitFor } from '../helpers/wait-for.js';

const db = useTestDatabase();

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

/** A webhook receiver on 127.0.0.1 that records every request and answers with the statuses it is given, then 200. */
async function startReceiver(
  statuses: number[] = [],
  delayMs = 0,
): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      setTimeout(() => {
        res.statusCode = statuses.shift() ?? 200;
        res.end('ok');
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function verifySignature(secret: string, header: string | undefined, body: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!match) return false;
  return createHmac('sha256', secret).update(`${match[1]}.${body}`).digest('hex') === match[2];
}

const ROWS_SQL =
  "select i::bigint as id, 'name ' || i as name, (i * 1.5)::decimal(10,2) as amount, [i, i + 1] as tags, date '2026-01-01' + i::int as day from range(1, 1001) t(i)";

describe.each(TRANSPORTS)('sends over $name', (transport) => {
  let api: Harness;
  const clock = manualClock(Date.parse('2026-11-10T12:00:00Z'));
  beforeAll(async () => {
    api = await transport.start({
      services: {
        clock,
        jobSettings: { leaseMs: 10 * 365 * 86_400_000 },
        sendSettings: { webhookRetry: { attempts: 3, baseDelayMs: 20, maxDelayMs: 1000, timeoutMs: 5000 } },
      },
    });
  });
  afterAll(async () => {
    await api.close();
  });
  const call = (method: string, path: string, body?: object) =>
    api.request(path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    });
  const json = async (method: string, path: string, body?: object): Promise<Json> =>
    (await (await call(method, path, body)).json()) as Json;
  const finished = async (runId: string): Promise<Json> => {
    for (let i = 0; i < 400; i++) {
      const job = await json('GET', `/jobs/${runId}`);
      if (job.status !== 'queued' && job.status !== 'running') return job;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`run ${runId} did not finish`);
  };
  const runAndWait = async (sendId: string): Promise<Json> => {
    const response = await call('POST', `/sends/${sendId}/run`);
    expect(response.status).toBe(202);
    const run = (await response.json()) as Json;
    expect(run).toMatchObject({ object: 'send_run', send: sendId, trigger: 'manual', job: `/jobs/${run.id}` });
    await finished(run.id);
    return json('GET', `/sends/${sendId}/runs/${run.id}`);
  };
  const pgDestination = (table: string, extra: object = {}) => ({
    type: 'postgres',
    host: db.host,
    port: db.port,
    database: db.database,
    user: 'postgres',
    table,
    ...extra,
  });

  it('upserts a query result into a PostgreSQL table it creates, verified row by row', async () => {
    const table = `sent_${transport.name.replace(/\W/g, '_')}`;
    const created = await call('POST', '/sends', {
      name: 'orders to pg',
      sql: ROWS_SQL,
      destination: pgDestination(table, { mode: 'upsert', key: ['id'] }),
    });
    expect(created.status).toBe(201);
    const send = (await created.json()) as Json;
    expect(send).toMatchObject({
      object: 'send',
      name: 'orders to pg',
      status: 'active',
      schedule: null,
      last_run: null,
    });
    expect(send.destination).toEqual({
      type: 'postgres',
      port: db.port,
      database: db.database,
      ssl_mode: 'disable',
      schema: 'public',
      table,
      mode: 'upsert',
      key: ['id'],
      credentials: { host: 'set', user: 'set' },
    });
    expect(JSON.stringify(send)).not.toContain(db.host);

    const run = await runAndWait(send.id);
    expect(run).toMatchObject({ status: 'succeeded', rows_sent: 1000, error: null });
    const rows = (
      await adminQuery(`SELECT id, name, amount, tags, day::text AS day FROM public.${table} ORDER BY id`, db.database)
    ).rows;
    expect(rows).toHaveLength(1000);
    rows.forEach((row, index) => {
      const i = index + 1;
      expect(row).toEqual({
        id: String(i),
        name: `name ${i}`,
        amount: (i * 1.5).toFixed(2),
        tags: [i, i + 1],
        day: new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10),
      });
    });
    const key = await adminQuery(
      `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indrelid = 'public.${table}'::regclass AND i.indisprimary`,
      db.database,
    );
    expect(key.rows).toEqual([{ attname: 'id' }]);

    // A second run with changed rows updates those in place and adds new ones; the rest stay.
    const changed =
      "select i::bigint as id, 'renamed ' || i as name, 0::decimal(10,2) as amount, [0] as tags, date '2026-01-01' as day from range(995, 1006) t(i)";
    expect((await call('PATCH', `/sends/${send.id}`, { sql: changed })).status).toBe(200);
    expect(await runAndWait(send.id)).toMatchObject({ status: 'succeeded', rows_sent: 11 });
    const after = (await adminQuery(`SELECT id::int, name FROM public.${table} ORDER BY id`, db.database)).rows as {
      id: number;
      name: string;
    }[];
    expect(after).toHaveLength(1005);
    for (const row of after) expect(row.name).toBe(row.id >= 995 ? `renamed ${row.id}` : `name ${row.id}`);
    const runs = await json('GET', `/sends/${send.id}/runs`);
    expect(runs.data.map((r: Json) => r.rows_sent)).toEqual([11, 1000]);
    expect((await json('GET', `/sends/${send.id}`)).last_run).toMatchObject({ status: 'succeeded', rows_sent: 11 });
    expect((await json('GET', `/usage`)).totals.rows_sent).toBeGreaterThanOrEqual(1011);
  });

  it('replace mode leaves exactly the result, in one transaction; a failed delivery changes nothing', async () => {
    const table = `replaced_${transport.name.replace(/\W/g, '_')}`;
    await adminQuery(
      `CREATE TABLE public.${table} (id bigint, label text); INSERT INTO public.${table} VALUES (99, 'old')`,
      db.database,
    );
    const send = await json('POST', '/sends', {
      name: 'replace',
      sql: "select i::bigint as id, 'new ' || i as label from range(1, 4) t(i)",
      destination: pgDestination(table, { mode: 'replace' }),
    });
    expect(await runAndWait(send.id)).toMatchObject({ status: 'succeeded', rows_sent: 3 });
    expect((await adminQuery(`SELECT id::int, label FROM public.${table} ORDER BY id`, db.database)).rows).toEqual([
      { id: 1, label: 'new 1' },
      { id: 2, label: 'new 2' },
      { id: 3, label: 'new 3' },
    ]);
    // A value the table cannot hold fails the run after the delete: the rollback keeps the old rows.
    await call('PATCH', `/sends/${send.id}`, { sql: "select 'not a number' as id, 'x' as label" });
    const failed = await runAndWait(send.id);
    expect(failed).toMatchObject({ status: 'failed', rows_sent: 0, error: { code: 'delivery_failed' } });
    expect(failed.error.message).toMatch(/invalid input syntax/);
    expect((await adminQuery(`SELECT count(*)::int AS n FROM public.${table}`, db.database)).rows[0].n).toBe(3);

    // An unreachable database fails the run without naming the host.
    const lost = await json('POST', '/sends', {
      name: 'lost',
      sql: 'select 1 as id',
      destination: {
        ...pgDestination('t', { mode: 'replace' }),
        database: 'lake_no_such_db_9f3',
        password: 'hunter2-never-shown',
      },
    });
    expect(lost.destination.credentials).toEqual({ host: 'set', user: 'set', password: 'set' });
    expect(JSON.stringify(await json('GET', `/sends/${lost.id}`))).not.toContain('hunter2');
    const outcome = await runAndWait(lost.id);
    expect(outcome).toMatchObject({
      status: 'failed',
      error: { code: 'delivery_failed', message: expect.stringMatching(/database not found/) },
    });
    expect(JSON.stringify(outcome)).not.toMatch(/lake_no_such_db_9f3|localhost|127\.0\.0\.1/);
  });

  it('a destination that refuses with a message of megabytes has the run and its job say the first thousand characters', async () => {
    // A trigger's RAISE is the destination's to word: here 2,000,000 characters, which the run, its job, the job's
    // event and every list of jobs carried whole.
    const table = `loud_${transport.name.replace(/\W/g, '_')}`;
    await adminQuery(
      `CREATE TABLE public.${table} (id bigint);
       CREATE FUNCTION public.${table}_refuse() RETURNS trigger LANGUAGE plpgsql
         AS $$ BEGIN RAISE EXCEPTION '%', repeat('no! ', 500000); END $$;
       CREATE TRIGGER refuse BEFORE INSERT ON public.${table} FOR EACH ROW EXECUTE FUNCTION public.${table}_refuse();`,
      db.database,
    );
    const send = await json('POST', '/sends', {
      name: 'loud',
      sql: 'select 1::bigint as id',
      destination: pgDestination(table, { mode: 'replace' }),
    });
    const failed = await runAndWait(send.id);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'delivery_failed' } });
    const message = failed.error.message as string;
    expect(message).toMatch(/^the destination database refused the delivery: (no! ){100}/);
    expect(message).toMatch(/…/);
    expect(message.length).toBeLessThan(1_200);
    const job = await json('GET', `/jobs/${failed.id}`);
    expect(job.error).toEqual(failed.error);
    const events = await (await call('GET', `/jobs/${failed.id}/events`)).text();
    expect(events.length).toBeLessThan(20_000);
  });

  it('delivers to a webhook in signed JSON batches, retrying a 503, and in NDJSON', async () => {
    const receiver = await startReceiver([503]);
    try {
      const created = (await json('POST', '/sends', {
        name: 'hook',
        sql: ROWS_SQL,
        destination: { type: 'webhook', url: receiver.url, batch_size: 300 },
      })) as Json;
      expect(created.signing_secret).toMatch(/^whsec_[0-9a-f]{48}$/);
      expect((await json('GET', `/sends/${created.id}`)).signing_secret).toBeUndefined();
      const run = await runAndWait(created.id);
      expect(run).toMatchObject({ status: 'succeeded', rows_sent: 1000, batches: 4 });
      // Batch 1 was refused once with 503 and sent again with the same delivery id.
      expect(receiver.received).toHaveLength(5);
      expect(receiver.received[0]?.headers['lake-delivery-id']).toBe(receiver.received[1]?.headers['lake-delivery-id']);
      const ids: number[] = [];
      for (const request of receiver.received.slice(1)) {
        expect(request.headers['content-type']).toBe('application/json');
        expect(verifySignature(created.signing_secret, request.headers['lake-signature'] as string, request.body)).toBe(
          true,
        );
        expect(
          verifySignature('whsec_wrong_secret_0000', request.headers['lake-signature'] as string, request.body),
        ).toBe(false);
        const batch = JSON.parse(request.body) as Json;
        expect(batch).toMatchObject({ send: created.id, run: run.id });
        ids.push(...batch.rows.map((r: Json) => Number(r.id)));
      }
      expect(ids).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
      expect(JSON.parse(receiver.received[1]?.body ?? '{}').rows[0]).toEqual({
        id: 1,
        name: 'name 1',
        amount: '1.50',
        tags: [1, 2],
        day: '2026-01-02',
      });

      receiver.received.length = 0;
      const ndjson = (await json('POST', '/sends', {
        name: 'hook nd',
        sql: 'select i as n from range(5) t(i)',
        destination: { type: 'webhook', url: receiver.url, format: 'ndjson', secret: 'my-shared-secret-123' },
      })) as Json;
      expect(ndjson.signing_secret).toBeUndefined();
      expect(await runAndWait(ndjson.id)).toMatchObject({ status: 'succeeded', rows_sent: 5, batches: 1 });
      const request = receiver.received[0] as (typeof receiver.received)[number];
      expect(request.headers['content-type']).toBe('application/x-ndjson');
      expect(verifySignature('my-shared-secret-123', request.headers['lake-signature'] as string, request.body)).toBe(
        true,
      );
      expect(
        request.body
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).n),
      ).toEqual([0, 1, 2, 3, 4]);
    } finally {
      await receiver.close();
    }
  });

  it('a webhook that keeps failing fails the run after its retries; a 400 is not retried', async () => {
    const receiver = await startReceiver([500, 500, 500, 400]);
    try {
      const send = await json('POST', '/sends', {
        name: 'down',
        sql: 'select 1 as x',
        destination: { type: 'webhook', url: receiver.url },
      });
      // The run says no more than that the receiver did not accept (its status would tell a tenant what answers at
      // an address); the server's log keeps the status for its operator.
      const generic = (attempts: number): string =>
        `The webhook did not accept batch 1: no 2xx answer after ${attempts} attempt${attempts === 1 ? '' : 's'} (the receiver answered with an error, did not answer in time, or could not be reached).`;
      expect(await runAndWait(send.id)).toMatchObject({
        status: 'failed',
        rows_sent: 0,
        error: { code: 'delivery_failed', message: generic(3) },
      });
      expect(receiver.received).toHaveLength(3);
      expect(await runAndWait(send.id)).toMatchObject({ status: 'failed', error: { message: generic(1) } });
      expect(receiver.received).toHaveLength(4);
      expect(JSON.stringify(api.logs)).toContain('"detail":"HTTP 400"');
    } finally {
      await receiver.close();
    }
  });

  it('secrets sealed with another key (a replica given the wrong key file) fail the run with what to fix, logged for the operator', async () => {
    const receiver = await startReceiver();
    try {
      const send = await json('POST', '/sends', {
        name: 'other key',
        sql: 'select 1 as x',
        destination: { type: 'webhook', url: receiver.url, secret: 'shared-secret-never-logged' },
      });
      const otherKey = new SecretBox(secretsKeyFile(join(tempDir('lake-other-key'), 'secrets.key')));
      await api.home.db.run('UPDATE sends SET secrets = ? WHERE id = ?', [
        otherKey.seal(send.id, { secret: 'shared-secret-never-logged' }),
        send.id,
      ]);
      const run = await runAndWait(send.id);
      expect(run).toMatchObject({ status: 'failed', rows_sent: 0, error: { code: 'service_unavailable' } });
      expect(run.error.message).toMatch(/not the key that sealed them.*LAKE_SECRETS_KEY_FILE/);
      expect(receiver.received).toHaveLength(0);
      const logged = api.logs as Json[];
      const line = logged.find((l) => l.run === run.id);
      expect(line).toMatchObject({
        level: 'error',
        msg: 'send run failed',
        send: send.id,
        job: run.id,
        code: 'service_unavailable',
      });
      expect(JSON.stringify(logged)).not.toContain('shared-secret-never-logged');
      // A failure that is the destination's is the user's to read in the run, not an error of the server's: the
      // log keeps only its detail (which the run's message leaves out), as information.
      const refused = await json('POST', '/sends', {
        name: 'refused',
        sql: 'select 1 as x',
        destination: { type: 'webhook', url: 'http://127.0.0.1:1/none' },
      });
      const failed = await runAndWait(refused.id);
      expect(failed.status).toBe('failed');
      expect(logged.filter((l) => l.run === failed.id)).toEqual([
        expect.objectContaining({
          level: 'info',
          msg: 'send delivery failed',
          job: failed.id,
          detail: 'the receiver could not be reached',
        }),
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('a run asked again with its Idempotency-Key, after it ended, is the same run, not a second delivery', async () => {
    const receiver = await startReceiver();
    try {
      const send = await json('POST', '/sends', {
        name: 'retried',
        sql: 'select 1 as x',
        destination: { type: 'webhook', url: receiver.url },
      });
      const keyed = (key: string) =>
        api.request(`/sends/${send.id}/run`, { method: 'POST', headers: { 'Idempotency-Key': key } });
      const first = await keyed('run-once');
      expect(first.status).toBe(202);
      expect(first.headers.get('Idempotent-Replayed')).toBeNull();
      const run = (await first.json()) as Json;
      expect(await finished(run.id)).toMatchObject({ status: 'succeeded' });
      // A client whose answer was lost retries after the run ended: no send_in_progress to stop a second delivery.
      const again = await keyed('run-once');
      expect(again.status).toBe(202);
      expect(again.headers.get('Idempotent-Replayed')).toBe('true');
      expect(again.headers.get('Location')).toBe(`/jobs/${run.id}`);
      expect(((await again.json()) as Json).id).toBe(run.id);
      expect(receiver.received).toHaveLength(1);
      // Another key is another run; a key that is no key is refused.
      const other = (await (await keyed('run-twice')).json()) as Json;
      expect(other.id).not.toBe(run.id);
      await finished(other.id);
      expect(receiver.received).toHaveLength(2);
      await expectError(await keyed(' '), 400, 'parameter_invalid', 'Idempotency-Key');
      expect((await json('GET', `/sends/${send.id}/runs`)).data).toHaveLength(2);
    } finally {
      await receiver.close();
    }
  });

  it('pause, resume, one run at a time, delete; bad input named by field', async () => {
    const receiver = await startReceiver([], 400);
    try {
      const send = await json('POST', '/sends', {
        name: 'controls',
        sql: 'select 1 as x',
        destination: { type: 'webhook', url: receiver.url },
      });
      const paused = await json('PATCH', `/sends/${send.id}`, { paused: true });
      expect(paused).toMatchObject({ status: 'paused', paused: true });
      await expectError(await call('POST', `/sends/${send.id}/run`), 409, 'send_paused');
      expect(await json('PATCH', `/sends/${send.id}`, { paused: false })).toMatchObject({ status: 'active' });
      const first = (await (await call('POST', `/sends/${send.id}/run`)).json()) as Json;
      await expectError(await call('POST', `/sends/${send.id}/run`), 409, 'send_in_progress');
      await expectError(await call('DELETE', `/sends/${send.id}`), 409, 'send_in_progress');
      expect(await finished(first.id)).toMatchObject({ status: 'succeeded', kind: 'send' });
      expect((await call('DELETE', `/sends/${send.id}`)).status).toBe(200);
      await expectError(await call('GET', `/sends/${send.id}`), 404, 'send_not_found');
      await expectError(await call('GET', `/jobs/${first.id}`), 404, 'job_not_found');
    } finally {
      await receiver.close();
    }
    await expectError(
      await call('POST', '/sends', { sql: 'select 1', destination: { type: 'webhook', url: 'http://127.0.0.1:9/x' } }),
      400,
      'parameter_missing',
      'name',
    );
    await expectError(
      await call('POST', '/sends', {
        name: 'x',
        sql: 'drop table t',
        destination: { type: 'webhook', url: 'http://127.0.0.1:9/x' },
      }),
      400,
      'write_not_allowed',
    );
    await expectError(
      await call('POST', '/sends', { name: 'x', sql: 'select 1', destination: { type: 'ftp' } }),
      400,
      'parameter_invalid',
      'destination.type',
    );
    await expectError(
      await call('POST', '/sends', {
        name: 'x',
        sql: 'select 1',
        destination: { type: 'webhook', url: 'file:///etc/passwd' },
      }),
      400,
      'parameter_invalid',
      'destination.url',
    );
    await expectError(
      await call('POST', '/sends', { name: 'x', sql: 'select 1', destination: pgDestination('t', { mode: 'upsert' }) }),
      400,
      'parameter_missing',
      'destination.key',
    );
    await expectError(
      await call('POST', '/sends', {
        name: 'x',
        sql: 'select 1',
        destination: pgDestination('bad name', { mode: 'replace' }),
      }),
      400,
      'parameter_invalid',
      'destination.table',
    );
    await expectError(
      await call('POST', '/sends', {
        name: 'x',
        sql: 'select 1',
        destination: { type: 'webhook', url: 'http://127.0.0.1:9/x' },
        schedule: { every_minutes: 0 },
      }),
      400,
      'parameter_invalid',
      'schedule.every_minutes',
    );
    await expectError(await call('PATCH', '/sends/snd_nope', { paused: true }), 404, 'send_not_found');
  });

  it('SQL that cannot run (statement parameters) is refused at creation; an older send holding it fails its run with the reason', async () => {
    await expectError(
      await call('POST', '/sends', {
        name: 'x',
        sql: 'select $1',
        destination: { type: 'webhook', url: 'http://127.0.0.1:9/x' },
      }),
      400,
      'parameter_invalid',
    );
    const receiver = await startReceiver();
    try {
      const send = await json('POST', '/sends', {
        name: 'old',
        sql: 'select 1 as x',
        destination: { type: 'webhook', url: receiver.url },
      });
      // As a send saved before parameters were refused would hold it.
      await api.home.db.run('UPDATE sends SET sql = ? WHERE id = ?', ["select {'a': ?} as x", send.id]);
      const failed = await runAndWait(send.id);
      expect(failed).toMatchObject({
        status: 'failed',
        rows_sent: 0,
        error: { code: 'parameter_invalid', message: expect.stringMatching(/statement parameter/) },
      });
      expect(receiver.received).toHaveLength(0);
      // The service carries on: the same send with runnable SQL delivers.
      await api.home.db.run('UPDATE sends SET sql = ? WHERE id = ?', ['select 1 as x', send.id]);
      expect(await runAndWait(send.id)).toMatchObject({ status: 'succeeded', rows_sent: 1 });
    } finally {
      await receiver.close();
    }
  });

  it('a run is a job: cancelling it stops the delivery', async () => {
    const receiver = await startReceiver([], 3000);
    try {
      const send = await json('POST', '/sends', {
        name: 'slow',
        sql: 'select 1 as x',
        destination: { type: 'webhook', url: receiver.url },
      });
      const run = (await (await call('POST', `/sends/${send.id}/run`)).json()) as Json;
      await waitFor(
        () => receiver.received.length,
        (n) => n > 0,
        { intervalMs: 10 },
      );
      const cancel = await call('POST', `/jobs/${run.id}/cancel`);
      expect(cancel.status).toBeLessThan(300);
      const job = await finished(run.id);
      expect(job).toMatchObject({ kind: 'send', status: 'cancelled' });
      expect(await json('GET', `/sends/${send.id}/runs/${run.id}`)).toMatchObject({
        status: 'cancelled',
        rows_sent: 0,
      });
    } finally {
      await receiver.close();
    }
  });

  it('runs on its schedule when due, and not while paused', async () => {
    const receiver = await startReceiver();
    try {
      const send = await json('POST', '/sends', {
        name: 'hourly',
        sql: 'select 42 as answer',
        destination: { type: 'webhook', url: receiver.url },
        schedule: { every_minutes: 60 },
      });
      expect(send.schedule).toEqual({ every_minutes: 60 });
      expect(send.next_run).toBe(Math.floor(clock.now() / 1000) + 3600);
      const due = async () => {
        const started = await api.services.sends.runDue();
        const mine = await Promise.all(
          started.map(async (id) => (await api.services.sends.store.getRun(id))?.sendId === send.id),
        );
        return started.filter((_, i) => mine[i]);
      };
      expect(await due()).toEqual([]);
      clock.advance(3600_000);
      const [runId] = await due();
      expect(await finished(runId as string)).toMatchObject({ status: 'succeeded' });
      expect((await json('GET', `/sends/${send.id}/runs/${runId}`)).trigger).toBe('schedule');
      expect((await json('GET', `/sends/${send.id}`)).next_run).toBe(Math.floor(clock.now() / 1000) + 3600);
      await call('PATCH', `/sends/${send.id}`, { paused: true });
      clock.advance(3 * 3600_000);
      expect(await due()).toEqual([]);
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it("a deactivated person's send fails its runs with the reason; a deactivated organization's schedules wait", async () => {
    const receiver = await startReceiver();
    try {
      const member = await newMember(api, ['sends:manage', 'sends:read', 'query:read']);
      const made = await api.request('/sends', {
        method: 'POST',
        token: member.token,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          name: 'member send',
          sql: 'select 1 as one',
          destination: { type: 'webhook', url: receiver.url },
          schedule: { every_minutes: 60 },
        }),
      });
      const send = (await made.json()) as Json;
      expect(await runAndWait(send.id)).toMatchObject({ status: 'succeeded' });
      await api.home.directory.setUserDeactivated(member.userId, true);
      expect(await runAndWait(send.id)).toMatchObject({ status: 'failed', error: { code: 'user_deactivated' } });
      await api.home.directory.setUserDeactivated(member.userId, false);

      const organization = api.home.organization.id;
      await api.home.directory.setOrganizationDeactivated(organization, true);
      try {
        clock.advance(2 * 3600_000);
        const started = await api.services.sends.runDue();
        const of = await Promise.all(started.map(async (id) => (await api.services.sends.store.getRun(id))?.sendId));
        expect(of).not.toContain(send.id);
      } finally {
        await api.home.directory.setOrganizationDeactivated(organization, false);
      }
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });
});
