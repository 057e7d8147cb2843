import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIRST_PAGE_MAX_BYTES } from '../../src/service/engine/result-rows.js';
import { FirstPages } from '../../src/service/queries/first-pages.js';
import { ResultReader } from '../../src/service/queries/result-reader.js';
import { inMemory, type Harness } from '../helpers/transports.js';

type Page = {
  status: string;
  id: string;
  columns: string[];
  data: Record<string, unknown>[];
  has_more: boolean;
  next_cursor: string | null;
  row_count: number;
};

/**
 * One engine per query: the engine that wrote the result reads its first page back, so the first page of a result
 * needs no engine of its own, and the column list comes from the same read of the file every later page reads.
 */
describe('the first page of a result', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await inMemory.start();
  });
  afterAll(async () => {
    await api?.close();
  });

  const run = async (sql: string, query = ''): Promise<Page> => {
    const posted = (await (
      await api.request('/queries', {
        method: 'POST',
        body: JSON.stringify({ sql }),
        headers: { 'Content-Type': 'application/json' },
      })
    ).json()) as { id: string };
    return (await (await api.request(`/queries/${posted.id}?wait=20&format=inline${query}`)).json()) as Page;
  };

  const TYPES_SQL = `SELECT i AS n, 'row ' || i AS label, i::HUGEINT * 170141183460469231731687303715884105 AS huge, [i, i + 1]::INTEGER[2] AS pair,
      {'k': i, 'v': [i::VARCHAR]} AS nested, ('2020-01-01'::TIMESTAMP_S + to_seconds(i)) AS at_s, (i / 7)::DECIMAL(18, 3) AS amount,
      CASE WHEN i % 3 = 0 THEN NULL ELSE i * 1.5 END AS maybe, i AS "__proto__"
    FROM range(250) t(i)`;

  it('is served without starting the result reader, and equals what the reader reads from the file', async () => {
    const page = await run(TYPES_SQL);
    expect(page.status).toBe('succeeded');
    expect(page.data).toHaveLength(100);
    expect(page.has_more).toBe(true);
    expect(api.services.resultReader.started).toBe(false);

    const record = await api.services.queries.store.get(api.home.organization.id, page.id);
    const file = api.services.results.file(record!)!;
    const fresh = new ResultReader();
    try {
      const fromFile = await fresh.page(file, 0, 100);
      expect(JSON.parse(JSON.stringify(page.data))).toEqual(JSON.parse(JSON.stringify(fromFile.rows)));
      expect(page.columns).toEqual(fromFile.columns);
    } finally {
      await fresh.close();
    }
    // Types as the file holds them: HUGEINT as exact text, a fixed-size array as a list, TIMESTAMP_S as TIMESTAMP.
    expect(Object.fromEntries(record!.columns!.map((c) => [c.name, c.type]))).toMatchObject({
      huge: 'VARCHAR',
      pair: 'INTEGER[]',
      at_s: 'TIMESTAMP',
      amount: 'DECIMAL(18,3)',
    });

    // The next page comes from the file, continuing exactly where the first stopped.
    const next = (await (
      await api.request(`/queries/${page.id}?format=inline&starting_after=${page.next_cursor}&limit=1000`)
    ).json()) as Page;
    expect(next.data.map((r) => r.n)).toEqual(Array.from({ length: 150 }, (_, i) => i + 100));
    expect(api.services.resultReader.started).toBe(true);
  });

  it('a larger first page than the engine kept is read from the file, whole', async () => {
    const page = await run("SELECT i, repeat('x', 3000) AS pad FROM range(1000) t(i)", '&limit=1000');
    // ~3 MB of rows: more than the engine keeps (1 MB), so the page comes from the file, all 1000 rows.
    expect(page.data).toHaveLength(1000);
    expect(page.data.at(-1)?.i).toBe(999);
  });

  it('values too large for a page are not read back by the engine; the page is refused as before', async () => {
    const posted = (await (
      await api.request('/queries', {
        method: 'POST',
        body: JSON.stringify({ sql: "SELECT repeat('x', 20000000) AS big" }),
        headers: { 'Content-Type': 'application/json' },
      })
    ).json()) as { id: string };
    const files = (await (await api.request(`/queries/${posted.id}?wait=20`)).json()) as { status: string };
    expect(files.status).toBe('succeeded');
    expect(api.services.results.firstPages.rows(posted.id, 1, 1)).toBeUndefined();
    const inline = await api.request(`/queries/${posted.id}?format=inline`);
    expect(inline.status).toBe(422);
    expect(((await inline.json()) as { error: { code: string } }).error.code).toBe('inline_row_too_large');
  });
});

describe('FirstPages', () => {
  const rows = (n: number, width = 10) => Array.from({ length: n }, (_, i) => ({ i, s: 'x'.repeat(width) }));

  it('serves [0, limit) only when it holds them all, or the whole result', () => {
    const pages = new FirstPages();
    pages.keep('q1', rows(100));
    expect(pages.rows('q1', 50, 1000)).toHaveLength(50);
    expect(pages.rows('q1', 100, 1000)).toHaveLength(100);
    expect(pages.rows('q1', 101, 1000)).toBeUndefined();
    expect(pages.rows('q1', 1000, 100)).toHaveLength(100);
    expect(pages.rows('q2', 10, 10)).toBeUndefined();
  });

  it('forgets pages past their age, and the oldest first past its byte budget', () => {
    const pages = new FirstPages();
    pages.keep('old', rows(10), 0);
    expect(pages.rows('old', 10, 10, 11 * 60_000)).toBeUndefined();
    // 40 pages of ~1 MB: more than the 32 MB budget, so the first ones go.
    for (let i = 0; i < 40; i++) pages.keep(`q${i}`, rows(10, FIRST_PAGE_MAX_BYTES / 10 - 30), 1000);
    expect(pages.rows('q0', 10, 10, 1000)).toBeUndefined();
    expect(pages.rows('q39', 10, 10, 1000)).toHaveLength(10);
  });
});
