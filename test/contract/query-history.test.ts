import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { expectError, finished, type Json } from '../helpers/queries.js';
import { newMember } from '../helpers/members.js';

/** GET /queries: the caller's query history, newest first, filtered by status, time, creator, text and tag. */
describe.each(TRANSPORTS)('query history over $name', (transport) => {
  let api: Harness;
  let member: string;
  let memberId: string;
  const mine: string[] = [];

  beforeAll(async () => {
    api = await transport.start();
    ({ userId: memberId, token: member } = await newMember(api, ['query:read']));
    const ask = async (body: object, token?: string): Promise<string> => {
      const response = await api.request('/queries', {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'Content-Type': 'application/json' },
        token,
      });
      const id = ((await response.json()) as Json).id as string;
      await finished(api, id);
      return id;
    };
    mine.push(await ask({ sql: "select 'Revenue 100%' as label", tags: ['team:finance'] }));
    mine.push(await ask({ sql: 'select * from lake.demo.nowhere' }));
    mine.push(await ask({ sql: 'select 42 as answer', tags: ['team:ops', 'team:finance'] }));
    await ask({ sql: 'select 7 as members_own' }, member);
  });
  afterAll(async () => {
    await api.close();
  });

  const list = async (query = '', token?: string): Promise<Json> => {
    const response = await api.request(`/queries${query}`, { token });
    const body = (await response.json()) as Json;
    expect(response.status, JSON.stringify(body)).toBe(200);
    return body;
  };
  const ids = (page: Json): string[] => (page.data as Json[]).map((q) => q.id as string);

  it("lists the caller's own queries, newest first, as query objects without results", async () => {
    const page = await list();
    expect(page.object).toBe('list');
    expect(ids(page)).toEqual([...mine].reverse());
    expect(page.data[0]).toMatchObject({ object: 'query', status: 'succeeded', sql: 'select 42 as answer' });
    expect(page.data[0].data).toBeUndefined();
    expect(page.data[0].files).toBeUndefined();
    // The member sees its own only.
    expect((await list('', member)).data.map((q: Json) => q.sql)).toEqual(['select 7 as members_own']);
  });

  it('filters by status, text (a literal piece, any case), tag and creation time', async () => {
    expect(ids(await list('?status=failed'))).toEqual([mine[1]]);
    expect(ids(await list(`?q=${encodeURIComponent('REVENUE 100%')}`))).toEqual([mine[0]]);
    expect(ids(await list(`?q=${encodeURIComponent('100_')}`))).toEqual([]);
    expect(ids(await list('?tag=team:finance'))).toEqual([mine[2], mine[0]]);
    expect(ids(await list('?tag=team'))).toEqual([]);
    const now = Math.floor(Date.now() / 1000);
    expect(ids(await list(`?created_after=${now + 60}`))).toEqual([]);
    expect(ids(await list(`?created_before=${now - 3600}`))).toEqual([]);
    expect(ids(await list(`?created_after=${now - 3600}&created_before=${now + 60}`))).toHaveLength(3);
  });

  it('pages like every list, and refuses a cursor that is not from this history', async () => {
    const first = await list('?limit=2');
    expect(first.has_more).toBe(true);
    expect(ids(first)).toEqual([mine[2], mine[1]]);
    const second = await list(`?limit=2&starting_after=${mine[1]}`);
    expect(second).toMatchObject({ has_more: false });
    expect(ids(second)).toEqual([mine[0]]);
    await expectError(await api.request('/queries?starting_after=qr_nothing'), 400, 'invalid_cursor');
    await expectError(
      await api.request(`/queries?starting_after=${mine[0]}`, { token: member }),
      400,
      'invalid_cursor',
    );
    await expectError(await api.request('/queries?limit=101'), 400, 'parameter_invalid');
    await expectError(await api.request('/queries?status=done'), 400, 'parameter_invalid');
  });

  it("lets owners and admins list everyone's or one person's queries; others get 403", async () => {
    const everyone = await list('?creator=all');
    expect(everyone.data.map((q: Json) => q.sql)).toContain('select 7 as members_own');
    expect(ids(await list(`?creator=${memberId}`))).toHaveLength(1);
    await expectError(await api.request('/queries?creator=all', { token: member }), 403, 'owner_required');
    expect((await list(`?creator=${memberId}`, member)).data).toHaveLength(1);
  });
});
