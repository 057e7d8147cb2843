import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runLake } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

describe('lake sync', () => {
  let env: Record<string, string>;
  let source: string;
  beforeAll(async () => {
    const root = tempDir('lake-sync-cli');
    env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
    source = (
      JSON.parse(
        (await runLake(['sources', 'create', '--connector', 'sample', '--name', 'Billing', '--json'], { env })).stdout,
      ) as { id: string }
    ).id;
  });
  const lake = (...args: string[]) => runLake(args, { env });

  it('--follow in a pipe prints one plain line per event (snapshot), a summary on stderr, and exits 0', async () => {
    const result = await lake('sync', 'start', source, '--follow');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.replace(/^\d\d:\d\d:\d\d /gm, 'HH:MM:SS ')).toBe(
      [
        'HH:MM:SS sync queued',
        'HH:MM:SS sync running',
        'HH:MM:SS billing.accounts extracting 0/100',
        'HH:MM:SS billing.accounts loading 0/100',
        'HH:MM:SS billing.accounts committed 100/100',
        'HH:MM:SS billing.invoices extracting 0/1,000',
        'HH:MM:SS billing.invoices loading 0/1,000',
        'HH:MM:SS billing.invoices committed 1,000/1,000',
        'HH:MM:SS billing.payments extracting 0/800',
        'HH:MM:SS billing.payments loading 0/800',
        'HH:MM:SS billing.payments committed 800/800',
        'HH:MM:SS sync succeeded',
        '',
      ].join('\n'),
    );
    expect(result.stderr).toMatch(/^sync succeeded: 3 of 3 tables, 1,900 rows/);
    expect((await lake('query', 'select count(*) as n from lake.billing.invoices')).stdout).toBe('n\n1000\n');
  });

  it('--json prints NDJSON events; status shows the latest sync; --tables limits it', async () => {
    const json = await lake('sync', 'start', source, '--follow', '--json', '--tables', 'billing.accounts');
    expect(json.code).toBe(0);
    const events = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; event: string; data: { table?: string } });
    expect(events.at(-1)?.event).toBe('job.succeeded');
    expect(new Set(events.filter((e) => e.event === 'sync.progress').map((e) => e.data.table))).toEqual(
      new Set(['billing.accounts']),
    );
    const status = await lake('sync', 'status', source);
    expect(status.stdout).toMatch(/status\tsucceeded\nlake\.billing\.accounts\tcommitted 100\/100/);
  });

  it('without --follow, a local sync still runs to the end in the command, and the exit code tells the outcome', async () => {
    const result = await lake('sync', 'start', source, '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ object: 'sync', status: 'succeeded', rows: 1900 });
    const detached = await lake('sync', 'start', source, '--detach');
    expect(detached.code).toBe(0);
    expect(detached.stderr).toContain('runs when lake serve runs');
    const queued = await lake('sync', 'status', source);
    expect(queued.code).toBe(3);
    expect(queued.stdout).toMatch(/status\tqueued/);
    const refused = await lake('sync', 'start', source);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('sync_in_progress');
  });

  it('--detach with the source named leaves the sync queued too: the name is looked up without running syncs', async () => {
    const created = await lake('sources', 'create', '--connector', 'sample', '--name', 'Ledger', '--json');
    expect(created.code, created.stderr).toBe(0);
    const detached = await lake('sync', 'start', 'Ledger', '--detach', '--json');
    expect(detached.code, detached.stderr).toBe(0);
    expect(JSON.parse(detached.stdout)).toMatchObject({ object: 'sync', status: 'queued' });
    const queued = await lake('sync', 'status', 'Ledger');
    expect(queued.stdout).toMatch(/status\tqueued/);
    expect(queued.code).toBe(3);
  });
});
