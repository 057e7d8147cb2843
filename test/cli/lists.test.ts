import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCsv, runLake } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** Every list command pages as the API does, prints the API's list object under --json, and CSV in a pipe. */
describe('list commands', () => {
  const root = tempDir('lake-lists');
  const env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
  const lake = (...args: string[]) => runLake(args, { env, timeoutMs: 60_000 });

  it('keep has_more and next_cursor, take --limit, --starting-after and --all, and refuse contradicting output flags', async () => {
    for (const name of ['one', 'two', 'three'])
      expect((await lake('sources', 'create', '--connector', 'sample', '--name', name)).code).toBe(0);
    const first = JSON.parse((await lake('sources', 'ls', '--limit', '2', '--json')).stdout);
    expect(first).toMatchObject({ object: 'list', has_more: true, next_cursor: expect.stringMatching(/^src_/) });
    expect(first.data).toHaveLength(2);
    const rest = JSON.parse(
      (await lake('sources', 'ls', '--limit', '2', '--starting-after', first.next_cursor, '--json')).stdout,
    );
    expect(rest).toMatchObject({ has_more: false, next_cursor: null });
    expect(rest.data.map((s: { name: string }) => s.name)).toEqual(['one']);
    const all = JSON.parse((await lake('sources', 'ls', '--all', '--limit', '1', '--json')).stdout);
    expect(all.data.map((s: { name: string }) => s.name)).toEqual(['three', 'two', 'one']);

    // In a pipe: CSV with a header, and a note on stderr (never in the rows) when there is more.
    const piped = await lake('sources', 'ls', '--limit', '2');
    const [header, ...rows] = parseCsv(piped.stdout);
    expect(header?.slice(0, 2)).toEqual(['id', 'name']);
    expect(rows).toHaveLength(2);
    expect(piped.stderr).toContain(`--starting-after ${first.next_cursor}`);

    // jobs: the review's example said has_more:false with no cursor.
    for (let i = 0; i < 3; i++) await lake('query', `select ${i}`);
    const jobs = JSON.parse((await lake('jobs', 'ls', '--limit', '2', '--json')).stdout);
    expect(jobs).toMatchObject({ has_more: true, next_cursor: expect.any(String) });

    const conflict = await lake('sources', 'ls', '--json', '--output', 'csv');
    expect(conflict.code).toBe(2);
    expect(conflict.stderr).toContain('contradict');
    // The review's example: a query under --json --output csv silently printed JSON. Every --output command refuses.
    for (const args of [
      ['query', 'select 1', '--json', '--output', 'csv'],
      ['catalog', 'ls', '--json', '--output', 'tsv'],
      ['logs', '--json', '--output', 'csv'],
      ['connectors', 'ls', '--json', '--output', 'csv'],
    ]) {
      const refused = await lake(...args);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stdout, args.join(' ')).toBe('');
      expect(JSON.parse(refused.stderr).error.message, args.join(' ')).toContain('contradict');
    }
    expect((await lake('sources', 'ls', '--all', '--starting-after', 'src_x')).code).toBe(2);
    for (const list of [
      ['sends', 'ls'],
      ['canvas', 'ls'],
      ['pats', 'ls'],
      ['jobs', 'ls'],
      ['logs'],
      ['admin', 'grants', 'ls'],
      ['admin', 'user', 'ls'],
    ]) {
      const out = await lake(...list);
      expect(out.code, `${list.join(' ')}: ${out.stderr}`).toBe(0);
      expect(out.stdout.split('\n')[0], list.join(' ')).toMatch(/^[a-z_]+(,[a-z_]+)+$/);
    }
  }, 90_000);
});

describe('errors under --json', () => {
  const root = tempDir('lake-json-errors');
  const env = { LAKE_HOME: join(root, 'home'), LAKE_CONFIG_DIR: join(root, 'config') };
  const lake = (...args: string[]) => runLake(args, { env, timeoutMs: 60_000 });

  it('are the API envelope plus the exit code; a failed query names its id; usage errors too', async () => {
    const failed = await lake('query', 'select 1/0 as x from no_such_table', '--json');
    expect(failed.code).toBe(1);
    const error = JSON.parse(failed.stderr).error as Record<string, unknown>;
    expect(error).toMatchObject({
      code: expect.any(String),
      message: expect.any(String),
      query: expect.stringMatching(/^qr_/),
    });
    expect(JSON.parse(failed.stderr).exit_code).toBe(1);

    const api = await lake('sources', 'get', 'src_nope', '--json');
    expect(api.code).toBe(1);
    expect(JSON.parse(api.stderr)).toMatchObject({
      error: { type: 'invalid_request_error', code: 'source_not_found', request_id: expect.stringMatching(/^req_/) },
      exit_code: 1,
    });

    const usage = await lake('sources', 'ls', '--colour', '--json');
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stderr)).toMatchObject({
      error: { code: 'usage', message: expect.stringContaining('--colour') },
      exit_code: 2,
    });
  }, 60_000);
});
