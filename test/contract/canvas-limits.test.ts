import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InProcessEngine } from '../../src/service/engine/in-process-engine.js';
import { expectError, type Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * What one member's canvas may cost the server: each element is a saved query judged for every restricted caller
 * who looks at it. A canvas holds at most 100, and judging them parses each (once, while kept): no query's catalog
 * or sandbox is made for it.
 */
describe('canvas limits', () => {
  let api: Harness;
  let token: string;
  beforeAll(async () => {
    api = await inMemory.start();
    const org = api.home.organization.id;
    const member = await api.home.directory.createUser(org, 'Member', 'member');
    token = (
      await api.home.credentials.issue({
        kind: 'pat',
        organizationId: org,
        userId: member.id,
        name: 'm',
        scopes: ['canvases:read', 'canvases:manage', 'query:read'],
      })
    ).secret;
    await api.services.permissions.setEnabled(org, true);
    await api.services.permissions.grant(org, 'demo', 'orders', 'user', member.id);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await api.close();
  });

  const call = (method: string, path: string, body?: unknown) =>
    api.request(path, {
      method,
      token,
      ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    });
  const elements = (n: number, from = 0) =>
    Array.from({ length: n }, (_, i) => ({ name: `e${from + i}`, sql: `select ${from + i} as n from demo.orders` }));

  it('holds at most 100 table elements, at creation and as they are added', async () => {
    await expectError(
      await call('POST', '/canvases', { name: 'big', elements: elements(101) }),
      400,
      'parameter_invalid',
    );
    const created = await call('POST', '/canvases', { name: 'full', elements: elements(99) });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as Json;
    expect((await call('POST', `/canvases/${id}/elements`, elements(1, 99)[0])).status).toBe(201);
    const full = await call('POST', `/canvases/${id}/elements`, elements(1, 100)[0]);
    await expectError(full, 409, 'canvas_full');
    const shown = (await (await call('GET', `/canvases/${id}`)).json()) as Json;
    expect(shown.elements).toHaveLength(100);
  });

  it('holds at most 100,000 characters of SQL in all, as one query may', async () => {
    const long = (n: number, size: number) => ({
      name: `long${n}`,
      sql: `select ${n} as n /* ${'x'.repeat(size)} */ from demo.orders`,
    });
    await expectError(
      await call('POST', '/canvases', { name: 'long', elements: [long(1, 60_000), long(2, 40_000)] }),
      400,
      'parameter_invalid',
    );
    const created = await call('POST', '/canvases', { name: 'long', elements: [long(1, 60_000)] });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as Json;
    const past = await call('POST', `/canvases/${id}/elements`, long(2, 40_000));
    const refused = await expectError(past, 409, 'canvas_full');
    expect(JSON.stringify(refused)).toMatch(/100,000 characters of SQL/);
    expect((await call('POST', `/canvases/${id}/elements`, long(3, 30_000))).status).toBe(201);
  });

  it("shows a restricted caller the elements it may read without making a query's sandbox for each", async () => {
    const inspect = vi.spyOn(InProcessEngine.prototype, 'inspect');
    const mixed = [...elements(50), { name: 'hidden', sql: 'select * from demo.customers' }];
    // Its creator may only save what it may read.
    await expectError(await call('POST', '/canvases', { name: 'mixed', elements: mixed }), 403, 'grant_table_denied');
    const created = await call('POST', '/canvases', { name: 'mine', elements: elements(50) });
    const { id } = (await created.json()) as Json;
    // An owner adds one the member may not read: the member's view leaves it out.
    const added = await api.request(`/canvases/${id}/elements`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'hidden', sql: 'select * from demo.customers' }),
    });
    expect(added.status).toBe(201);
    // What each element reads was kept when it was saved: the look parses nothing.
    const parse = vi.spyOn(InProcessEngine.prototype, 'parse');
    const shown = (await (await call('GET', `/canvases/${id}`)).json()) as Json;
    expect(shown.elements).toHaveLength(50);
    expect(JSON.stringify(shown)).not.toContain('customers');
    const listed = (await (await call('GET', '/canvases?limit=100')).json()) as Json;
    expect(listed.data.length).toBeGreaterThan(0);
    expect(parse).not.toHaveBeenCalled();
    // Elements saved before that was kept are judged by their parse (here the parses kept), with the same answer.
    await api.home.db.run('UPDATE canvas_elements SET reads = NULL');
    const again = (await (await call('GET', `/canvases/${id}`)).json()) as Json;
    expect(again.elements).toHaveLength(50);
    expect(JSON.stringify(again)).not.toContain('customers');
    expect(inspect).not.toHaveBeenCalled();
  });
});
