import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dayBars } from '../../src/commands/usage/index.js';
import { parseCsv, runLake } from '../helpers/cli.js';
import { adminQuery, useTestDatabase } from '../helpers/postgres.js';
import { type Json } from '../helpers/queries.js';
import { tempDir } from '../helpers/temp.js';
import { inMemory } from '../helpers/transports.js';

const db = useTestDatabase();

describe('lake logs and lake usage', () => {
  it('print what syncs logged and what the work cost, plainly in a pipe', async () => {
    const homeDir = join(tempDir('lake-logs-cli'), 'home');
    // Real syncs of a real PostgreSQL table through the API on the same home: one schema change, one error.
    const api = await inMemory.start({ homeDir, services: { rateLimits: false } });
    let sourceId: string;
    try {
      const call = async (method: string, path: string, body?: object): Promise<Json> =>
        (await (
          await api.request(path, {
            method,
            body: body && JSON.stringify(body),
            headers: body ? { 'Content-Type': 'application/json' } : {},
          })
        ).json()) as Json;
      const sync = async (): Promise<void> => {
        const started = await call('POST', `/sources/${sourceId}/sync`, {});
        for (
          let i = 0;
          i < 400 && ['queued', 'running'].includes((await call('GET', `/jobs/${started.id}`)).status);
          i++
        )
          await new Promise((r) => setTimeout(r, 25));
      };
      await adminQuery(
        `CREATE TABLE public.cli_logged (id int PRIMARY KEY); INSERT INTO public.cli_logged VALUES (1), (2); GRANT SELECT ON public.cli_logged TO ${db.reader}`,
        db.database,
      );
      const source = await call('POST', '/sources', {
        connector: 'postgres',
        name: 'logged',
        config: { port: db.port, database: db.database },
        host: db.host,
        user: db.reader,
      });
      sourceId = source.id;
      await call('PATCH', `/sources/${sourceId}`, {
        tables: source.tables.map((t: Json) => ({ schema: 'public', name: t.name, enabled: t.name === 'cli_logged' })),
      });
      await sync();
      await adminQuery('ALTER TABLE public.cli_logged ADD COLUMN note text', db.database);
      await sync();
      await adminQuery(`REVOKE SELECT ON public.cli_logged FROM ${db.reader}`, db.database);
      await sync();
    } finally {
      await api.close();
    }
    const env = { LAKE_HOME: homeDir };
    const logs = await runLake(['logs', '--source', sourceId], { env });
    expect(logs.code, logs.stderr).toBe(0);
    const [header, ...lines] = parseCsv(logs.stdout);
    // CSV with a header, like every listing in a pipe; oldest first, as a log reads: time, source, kind, table, message.
    expect(header).toEqual(['created', 'source', 'kind', 'table', 'message']);
    expect(lines.map((l) => l[2])).toEqual(['schema_change', 'error']);
    expect(lines[0]).toEqual([
      expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      sourceId,
      'schema_change',
      'public.cli_logged',
      expect.stringContaining('+note'),
    ]);
    expect((await runLake(['logs', '--kind', 'error', '--json'], { env })).stdout).toContain('permission denied');
    expect((await runLake(['logs', '--since', 'yesterday'], { env })).code).toBe(2);
    expect((await runLake(['logs', '--since', '-1'], { env })).code).toBe(2);
    expect((await runLake(['logs', '--kind', 'errors'], { env })).code).toBe(2);
    expect((await runLake(['logs', '--limit', '500'], { env })).code).toBe(2);
    expect((await runLake(['usage', '--month', '2026-13'], { env })).code).toBe(2);

    const usage = await runLake(['usage'], { env });
    expect(usage.code, usage.stderr).toBe(0);
    const fields = Object.fromEntries(
      usage.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')),
    );
    expect(fields.month).toBe(new Date().toISOString().slice(0, 7));
    expect(Number(fields.rows_synced)).toBe(4); // 2 rows, then 2 again after the schema change forced a full refresh
    expect(Number(fields.cost_projected)).toBeGreaterThan(0);
  }, 60_000);

  it('draws one bar per day, scaled to the busiest', () => {
    const bars = dayBars(
      [
        { date: '2026-11-01', cost: 1 },
        { date: '2026-11-02', cost: 0.5 },
        { date: '2026-11-03', cost: 0 },
      ],
      10,
    );
    expect(bars).toEqual(['11-01 ██████████ $1.00', '11-02 █████      $0.5000', '11-03            $0.0000']);
  });
});

describe('lake logs --follow', () => {
  it('prints entries as syncs record them, against a running server', async () => {
    const { spawn } = await import('node:child_process');
    const { readFileSync } = await import('node:fs');
    const { startServeProcess } = await import('../helpers/serve.js');
    const { LAKE_BIN } = await import('../helpers/cli.js');
    const home = join(tempDir('lake-logs-follow'), 'home');
    const server = await startServeProcess({ LAKE_HOME: home });
    const token = readFileSync(join(home, 'owner.token'), 'utf8').trim();
    const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
    const follower = spawn(process.execPath, [LAKE_BIN, 'logs', '--follow'], {
      env: {
        PATH: process.env.PATH ?? '',
        LAKE_BASE_URL: server.url,
        LAKE_TOKEN: token,
        LAKE_CONFIG_DIR: tempDir('lake-logs-follow-config'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    follower.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    try {
      await adminQuery('CREATE TABLE public.cli_hidden (id int PRIMARY KEY)', db.database);
      const source = (await (
        await fetch(`${server.url}/sources`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            connector: 'postgres',
            name: 'hidden',
            config: { port: db.port, database: db.database },
            host: db.host,
            user: db.limited,
          }),
        })
      ).json()) as Json;
      // cli_hidden is not readable by this user; customers is. Both are in one snapshot transaction.
      await fetch(`${server.url}/sources/${source.id}`, {
        method: 'PATCH',
        headers,
        body: JSON.stringify({
          tables: source.tables.map((t: Json) => ({
            schema: 'public',
            name: t.name,
            enabled: ['customers', 'cli_hidden'].includes(t.name),
          })),
        }),
      });
      const sync = (await (
        await fetch(`${server.url}/sources/${source.id}/sync`, { method: 'POST', headers, body: '{}' })
      ).json()) as Json;
      for (let i = 0; i < 150 && !stdout.includes('permission denied'); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(stdout).toMatch(new RegExp(`,${source.id},error,public\\.cli_hidden,.*permission denied`));
      // The failed table did not take the other down with it.
      let job: Json = {};
      for (let i = 0; i < 100 && !['failed', 'succeeded'].includes(job.status); i++) {
        job = (await (await fetch(`${server.url}/jobs/${sync.id}`, { headers })).json()) as Json;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(job.error).toMatchObject({
        code: 'tables_failed',
        message: expect.stringMatching(
          /^1 of 2 tables failed: public\.cli_hidden \(permission denied for table cli_hidden\)\./,
        ),
      });
      const rows = (await (await fetch(`${server.url}/catalog/hidden/customers`, { headers })).json()) as Json;
      expect(rows.row_count).toBe(50);
    } finally {
      follower.kill();
      await server.stop();
    }
  }, 60_000);
});
