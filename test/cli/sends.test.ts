import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

const db = useTestDatabase();

describe('lake sends', () => {
  const env = { LAKE_HOME: join(tempDir('lake-sends-cli'), 'home') };
  const lake = (args: string[], input?: string) => runLake(args, { env, input, timeoutMs: 30_000 });

  it('creates a PostgreSQL send, runs it (rows arrive), lists runs, pauses, resumes and deletes it', async () => {
    const created = await lake([
      'sends',
      'create',
      '--name',
      'top orders',
      '--sql',
      'select order_id, total from lake.demo.orders order by order_id limit 25',
      '--to',
      'postgres',
      '--host',
      db.host,
      '--port',
      String(db.port),
      '--database',
      db.database,
      '--user',
      'postgres',
      '--table',
      'cli_orders',
      '--key',
      'order_id',
      '--no-password',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const id = /^id\t(snd_\w+)$/m.exec(created.stdout)?.[1] as string;
    expect(id).toBeDefined();
    expect(created.stdout).toContain(`to\tpostgres ${db.database}.public.cli_orders (upsert on order_id)`);
    expect(created.stdout).not.toContain(db.host);

    const run = await lake(['sends', 'run', id]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^status\tsucceeded$/m);
    expect(run.stdout).toMatch(/^rows sent\t25$/m);
    expect(run.stderr).toBe('');
    const rows = (await adminQuery('SELECT order_id::int AS id FROM public.cli_orders ORDER BY order_id', db.database))
      .rows;
    expect(rows.map((r) => r.id)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));

    const runs = JSON.parse((await lake(['sends', 'runs', id, '--json'])).stdout);
    expect(runs.data).toEqual([expect.objectContaining({ status: 'succeeded', rows_sent: 25, trigger: 'manual' })]);
    const listed = await lake(['sends', 'ls']);
    // In a pipe, listings are CSV with a header.
    expect(listed.stdout.split('\n')[0]).toBe('id,name,status,to,schedule,last_run,rows_sent');
    expect(listed.stdout).toContain(
      `${id},top orders,active,postgres ${db.database}.public.cli_orders (upsert on order_id),on demand,succeeded,25`,
    );

    expect((await lake(['sends', 'pause', id])).stderr).toContain('is paused');
    const refused = await lake(['sends', 'run', id]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('send_paused');
    expect((await lake(['sends', 'resume', id])).code).toBe(0);
    const deleted = await lake(['sends', 'delete', id, '--json']);
    expect(JSON.parse(deleted.stdout)).toEqual({ object: 'send_deletion', id, deleted: true });
    expect((await lake(['sends', 'get', id])).code).toBe(1);
  });

  it('a webhook send prints its signing secret once; a failed run exits 1 with the reason', async () => {
    let hits = 0;
    const server: Server = createServer((req, res) => {
      hits++;
      req.resume();
      res.statusCode = 401;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/in`;
      const created = await lake([
        'sends',
        'create',
        '--name',
        'hook',
        '--sql',
        'select 1 as x',
        '--to',
        'webhook',
        '--url',
        url,
        '--format',
        'ndjson',
      ]);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toMatch(/^signing_secret\twhsec_[0-9a-f]{48}$/m);
      const id = /^id\t(snd_\w+)$/m.exec(created.stdout)?.[1] as string;
      expect((await lake(['sends', 'get', id])).stdout).not.toContain('whsec_');
      const run = await lake(['sends', 'run', id]);
      expect(run.code).toBe(1);
      expect(run.stdout).toContain(
        'error\tdelivery_failed: The webhook did not accept batch 1: no 2xx answer after 1 attempt',
      );
      expect(hits).toBe(1);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    const bad = await lake(['sends', 'create', '--name', 'x', '--sql', 'select 1', '--to', 'ftp']);
    expect(bad.code).toBe(2);
  });
});
