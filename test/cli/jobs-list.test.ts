import { describe, expect, it } from 'vitest';
import { parseCsv, runLake } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** What a script needs of jobs: the id of the query it ran, jobs filtered, each with its SQL and duration. */
describe('jobs for scripts', () => {
  const env = { LAKE_HOME: tempDir('lake-jobs-list') };

  it('--print-id gives the query id on stderr, alone on its line, and the rows stay clean on stdout', async () => {
    const ran = await runLake(['query', 'select 42 as answer', '--print-id'], { env });
    expect(ran.code, ran.stderr).toBe(0);
    expect(parseCsv(ran.stdout)).toEqual([['answer'], ['42']]);
    const id = ran.stderr.trim().split('\n')[0] as string;
    expect(id).toMatch(/^qr_[0-9a-z]+$/);
    const job = await runLake(['jobs', 'get', id], { env });
    expect(job.code).toBe(0);
    expect(job.stdout).toContain('sql\tselect 42 as answer');
    expect(job.stdout).toMatch(/duration\t\d+ s/);
    const polled = await runLake(['query', 'poll', id], { env });
    expect(polled.stdout).toContain('sql\tselect 42 as answer');
  });

  it('lake jobs ls filters by status, kind and since, and shows each query job its SQL and duration', async () => {
    await runLake(['query', 'select nope_column'], { env });
    await runLake(['query', 'select 7 as seven'], { env });
    const failed = await runLake(['jobs', 'ls', '--status', 'failed'], { env });
    expect(failed.code, failed.stderr).toBe(0);
    const rows = parseCsv(failed.stdout);
    expect(rows[0]).toEqual(['id', 'kind', 'status', 'created', 'duration', 'sql', 'error']);
    expect(rows.slice(1).map((r) => r[2])).toEqual(rows.slice(1).map(() => 'failed'));
    expect(rows.slice(1).some((r) => r[5] === 'select nope_column')).toBe(true);

    const recent = parseCsv((await runLake(['jobs', 'ls', '--kind', 'query', '--since', '1h'], { env })).stdout);
    expect(recent.slice(1).some((r) => r[5] === 'select 7 as seven' && r[2] === 'succeeded')).toBe(true);
    expect(parseCsv((await runLake(['jobs', 'ls', '--kind', 'sync'], { env })).stdout)).toHaveLength(1);
    expect(parseCsv((await runLake(['jobs', 'ls', '--since', '2999-01-01'], { env })).stdout)).toHaveLength(1);
    const bad = await runLake(['jobs', 'ls', '--since', 'yesterdayish'], { env });
    expect(bad.code).toBe(2);
    // Values the API would refuse are bad flag values (exit 2), said before anything is sent: Date.parse's loose
    // forms and a status or kind no job has.
    expect((await runLake(['jobs', 'ls', '--since', '-1'], { env })).code).toBe(2);
    expect((await runLake(['jobs', 'ls', '--since', '2026-11-24T10:00Z'], { env })).code).toBe(0);
    const status = await runLake(['jobs', 'ls', '--status', 'done'], { env });
    expect(status.code).toBe(2);
    expect(status.stderr).toContain("--status must be queued, running, succeeded, failed or cancelled, not 'done'");
    const kind = await runLake(['jobs', 'ls', '--kind', 'sends', '--json'], { env });
    expect(kind.code).toBe(2);
    expect(JSON.parse(kind.stderr).error).toMatchObject({ code: 'usage' });
  });
});
