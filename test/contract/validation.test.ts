import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';
import { expectError, type Json } from '../helpers/queries.js';

/**
 * Requests are checked against the contract before any handler runs: a missing field is parameter_missing, a wrong
 * one parameter_invalid (a route's own code where the spec gives one), each with `param` in dotted form and a
 * message that says what the field must be.
 */
describe.each(TRANSPORTS)('request validation over $name', (transport) => {
  let api: Harness;
  beforeAll(async () => {
    api = await transport.start();
  });
  afterAll(async () => {
    await api.close();
  });

  const call = (method: string, path: string, body?: unknown): Promise<Response> =>
    api.request(path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    });

  it('bodies: missing, mistyped, out of range and unknown fields name the field and say what it must be', async () => {
    expect((await expectError(await call('POST', '/queries', {}), 400, 'parameter_missing', 'sql')).message).toMatch(
      /sql: a string/,
    );
    expect(
      (await expectError(await call('POST', '/queries', { sql: 5 }), 400, 'parameter_invalid', 'sql')).message,
    ).toBe('sql must be a string.');
    expect(
      (
        await expectError(
          await call('POST', '/queries', { sql: 'select 1', limit: 5 }),
          400,
          'parameter_invalid',
          'limit',
        )
      ).message,
    ).toMatch(/Unknown field 'limit'. Known fields: sql/);
    await expectError(
      await call('POST', '/pats', { name: 'x', scopes: 'query:read' }),
      400,
      'parameter_invalid',
      'scopes',
    );
    // A field name of the caller's choosing is echoed cut short, not whole.
    const long = await expectError(
      await call('POST', '/queries', { sql: 'select 1', ['k'.repeat(50_000)]: 1 }),
      400,
      'parameter_invalid',
    );
    expect(JSON.stringify(long).length).toBeLessThan(1000);
    await expectError(
      await call('POST', '/pats', { name: 'x', scopes: ['query:read'], expires_in_days: 0 }),
      400,
      'parameter_invalid',
      'expires_in_days',
    );
    const element = await expectError(
      await call('POST', '/canvases', { name: 'c', elements: [{ name: 3, sql: 'select 1' }] }),
      400,
      'parameter_invalid',
      'elements[0].name',
    );
    expect(element.message).toMatch(/elements\[0\]\.name must be a string of 1 to 200 characters/);
    await expectError(
      await call('POST', '/sends', { name: 'n', sql: 'select 1', destination: { type: 'ftp' } }),
      400,
      'parameter_invalid',
      'destination.type',
    );
    await expectError(
      await call('POST', '/sends', {
        name: 'n',
        sql: 'select 1',
        destination: { type: 'webhook', url: 'http://127.0.0.1:9/x' },
        schedule: { every_minutes: 0 },
      }),
      400,
      'parameter_invalid',
      'schedule.every_minutes',
    );
  });

  it('sources use the spec’s invalid_source_parameters, down to a table setting', async () => {
    await expectError(
      await call('POST', '/sources', { connector: 'sample', config: 'big' }),
      400,
      'invalid_source_parameters',
      'config',
    );
    await expectError(
      await call('POST', '/sources', { connector: 'postgres', host: 5 }),
      400,
      'invalid_source_parameters',
      'host',
    );
    const created = await call('POST', '/sources', { connector: 'sample', name: 'Validated' });
    const source = (await created.json()) as Json;
    expect(created.status).toBe(201);
    await expectError(
      await call('PATCH', `/sources/${source.id}`, { tables: [{ schema: 'main', name: 'orders', mode: 'sometimes' }] }),
      400,
      'invalid_source_parameters',
      'tables[0].mode',
    );
    await expectError(
      await call('POST', `/sources/${source.id}/sync`, { tables: [] }),
      400,
      'parameter_invalid',
      'tables',
    );
    await expectError(
      await call('POST', `/sources/${source.id}/sync`, { full_refresh: 'yes' }),
      400,
      'parameter_invalid',
      'full_refresh',
    );
  });

  it('query parameters: numbers in range, the spec’s own codes for format and cursors', async () => {
    const posted = (await (await call('POST', '/queries', { sql: 'select 1' })).json()) as Json;
    await expectError(await call('GET', `/queries/${posted.id}?wait=soon`), 400, 'parameter_invalid', 'wait');
    expect(
      (await expectError(await call('GET', `/queries/${posted.id}?wait=31`), 400, 'parameter_invalid', 'wait')).message,
    ).toBe('wait must be a whole number from 0 to 30.');
    await expectError(await call('GET', `/queries/${posted.id}?limit=0`), 400, 'parameter_invalid', 'limit');
    await expectError(await call('GET', `/queries/${posted.id}?format=csv`), 400, 'invalid_format', 'format');
    await expectError(
      await call('GET', `/queries/${posted.id}?starting_after=`),
      400,
      'invalid_cursor',
      'starting_after',
    );
    await expectError(await call('GET', '/jobs?limit=101'), 400, 'parameter_invalid', 'limit');
    await expectError(await call('GET', '/logs?since=yesterday'), 400, 'parameter_invalid', 'since');
    await expectError(await call('GET', '/usage?month=2026-13-01'), 400, 'parameter_invalid', 'month');
  });

  it('query parameters a route does not take, or given twice, are refused, not ignored', async () => {
    // A filter misspelled or of another API's naming would otherwise answer every row as if it had applied.
    const misspelt = await expectError(
      await call('GET', '/audit_events?created_after=2020-01-01'),
      400,
      'parameter_invalid',
      'created_after',
    );
    expect(misspelt.message).toBe(
      "Unknown query parameter 'created_after'. GET /audit_events takes: limit, starting_after, action, organization, actor, since, until.",
    );
    await expectError(await call('GET', '/jobs?state=failed'), 400, 'parameter_invalid', 'state');
    await expectError(await call('GET', '/sources?status=paused'), 400, 'parameter_invalid', 'status');
    expect(
      (await expectError(await call('GET', '/whoami?verbose=1'), 400, 'parameter_invalid', 'verbose')).message,
    ).toBe("Unknown query parameter 'verbose'. GET /whoami takes no query parameters.");
    const twice = await expectError(await call('GET', '/jobs?limit=1&limit=50'), 400, 'parameter_invalid', 'limit');
    expect(twice.message).toBe('limit is given 2 times; give it once.');
    const long = await expectError(await call('GET', `/jobs?${'k'.repeat(5_000)}=1`), 400, 'parameter_invalid');
    expect(JSON.stringify(long).length).toBeLessThan(1000);
    // What a route takes still works, and a bare '?' or an empty pair is no parameter.
    expect((await call('GET', '/jobs?limit=1')).status).toBe(200);
    expect((await call('GET', '/jobs?')).status).toBe(200);
    expect((await call('GET', '/jobs?&')).status).toBe(200);
  });

  it('fields sent to a route that takes no body are refused, not ignored; an empty body or {} is none', async () => {
    const posted = (await (await call('POST', '/queries', { sql: 'select 1' })).json()) as Json;
    // A caller who thinks a cancel takes a reason, or a delete an option, learns it does not before anything happens.
    const cancel = await expectError(
      await call('POST', `/jobs/${posted.id}/cancel`, { reason: 'wrong query' }),
      400,
      'parameter_invalid',
      'reason',
    );
    expect(cancel.message).toBe("Unknown field 'reason'. POST /jobs/{id}/cancel takes no body.");
    const source = (await (
      await call('POST', '/sources', { connector: 'sample', name: 'Bodiless', config: { scale: 1 } })
    ).json()) as Json;
    await expectError(
      await call('DELETE', `/sources/${source.id}`, { drop_tables: true }),
      400,
      'parameter_invalid',
      'drop_tables',
    );
    expect((await call('GET', `/sources/${source.id}`)).status).toBe(200);
    // A body that is not a JSON object is refused as on any route, not taken for none.
    for (const body of ['{"reason":', '["reason"]'])
      await expectError(
        await api.request(`/jobs/${posted.id}/cancel`, {
          method: 'POST',
          body,
          headers: { 'Content-Type': 'application/json' },
        }),
        400,
        'invalid_json',
      );
    // Cancelled already, or ended first: either answer, but not a refusal of the body.
    expect([200, 409]).toContain((await call('POST', `/jobs/${posted.id}/cancel`, {})).status);
    expect([200, 409]).toContain((await call('POST', `/jobs/${posted.id}/cancel`)).status);
    expect((await call('DELETE', `/sources/${source.id}`)).status).toBe(200);
  });

  it('an Idempotency-Key on a POST that cannot honour one is refused, not ignored', async () => {
    // Ignored, a client retrying POST /pats after a lost answer would leave a live token it never saw.
    const refused = await expectError(
      await api.request('/pats', {
        method: 'POST',
        body: JSON.stringify({ name: 'retried', scopes: ['query:read'] }),
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'k-1' },
      }),
      400,
      'parameter_invalid',
      'Idempotency-Key',
    );
    expect(refused.message).toBe(
      'POST /pats does not take an Idempotency-Key, so a retry of it is not made safe by one: see what the first attempt made before trying again. POST /queries, POST /sources/{id}/sync and POST /sends/{id}/run take one.',
    );
    expect(((await (await call('GET', '/pats')).json()) as Json).data).not.toContainEqual(
      expect.objectContaining({ name: 'retried' }),
    );
    // The routes that take one still do; a GET ignores it, as any safe request may repeat.
    const keyed = await api.request('/queries', {
      method: 'POST',
      body: JSON.stringify({ sql: 'select 1' }),
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'k-1' },
    });
    expect(keyed.status).toBe(202);
    expect((await api.request('/jobs', { headers: { 'Idempotency-Key': 'k-1' } })).status).toBe(200);
  });
});
