import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newMember } from '../helpers/members.js';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';

type Json = Record<string, any>;

describe.each(TRANSPORTS)('the audit log over $name', (transport) => {
  let api: Harness;
  beforeEach(async () => {
    api = await transport.start();
  });
  afterEach(async () => {
    await api.close();
  });

  const call = async (method: string, path: string, body?: object, token?: string) => {
    const response = await api.request(path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      token,
    });
    const text = await response.text();
    return {
      status: response.status,
      requestId: response.headers.get('request-id'),
      body: (text ? JSON.parse(text) : {}) as Json,
    };
  };

  it('records each audited action with actor, target, request id and address, and never a secret', async () => {
    const secrets: string[] = [];
    const requestIds: Record<string, string | null> = {};
    const pat = await call('POST', '/pats', { name: 'ci', scopes: ['query:read'] });
    expect(pat.status).toBe(201);
    secrets.push(pat.body.secret as string);
    requestIds['pat.created'] = pat.requestId;
    expect((await call('POST', `/pats/${pat.body.id}/revoke`)).status).toBe(200);
    // Revoked again: nothing changes, and nothing more is recorded.
    expect((await call('POST', `/pats/${pat.body.id}/revoke`)).status).toBe(200);
    const key = await call('POST', '/service-keys', { name: 'etl', scopes: ['query:read'] });
    expect(key.status).toBe(201);
    secrets.push(key.body.secret as string);
    expect((await call('POST', `/service-keys/${key.body.id}/revoke`)).status).toBe(200);

    const password = 'audit-password-that-must-not-appear';
    const source = await call('POST', '/sources', {
      connector: 'postgres',
      name: 'audited',
      config: { port: 1, database: 'nowhere' },
      host: '127.0.0.1',
      user: 'reader',
      password,
    });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    secrets.push(password);
    const newPassword = 'another-password-never-recorded';
    expect((await call('PATCH', `/sources/${source.body.id}`, { password: newPassword })).status).toBe(200);
    secrets.push(newPassword);
    expect((await call('PATCH', `/sources/${source.body.id}`, { config: { database: 'elsewhere' } })).status).toBe(200);
    // A change that is neither where it connects nor as whom is not audited.
    expect((await call('PATCH', `/sources/${source.body.id}`, { paused: true })).status).toBe(200);

    const webhook = 'whsec-audit-secret-value';
    const send = await call('POST', '/sends', {
      name: 'feed',
      sql: 'select 1 as one',
      destination: { type: 'webhook', url: 'http://127.0.0.1:9/hook?token=in-the-url-too', secret: webhook },
    });
    expect(send.status, JSON.stringify(send.body)).toBe(201);
    secrets.push(webhook, 'in-the-url-too');
    expect((await call('PATCH', `/sends/${send.body.id}`, { name: 'feed 2' })).status).toBe(200);
    expect((await call('DELETE', `/sends/${send.body.id}`)).status).toBeLessThan(300);
    expect((await call('DELETE', `/sources/${source.body.id}`)).status).toBeLessThan(300);

    // Permissions are managed by lake admin on the home: recorded as the local administrator.
    await api.services.permissions.setEnabled(api.home.organization.id, true);
    await api.services.permissions.grant(api.home.organization.id, 'demo', 'orders', 'user', api.home.owner.id);
    await api.services.permissions.revoke(api.home.organization.id, 'demo', 'orders', 'user', api.home.owner.id);
    await api.services.permissions.setEnabled(api.home.organization.id, false);

    const log = await call('GET', '/audit_events?limit=200');
    expect(log.status).toBe(200);
    const events = log.body.data as Json[];
    expect(events.map((e) => e.action).reverse()).toEqual([
      // The home's own owner token, made when the home was.
      'pat.created',
      'pat.created',
      'pat.revoked',
      'service_key.created',
      'service_key.revoked',
      'source.created',
      'source.credentials_changed',
      'source.destination_changed',
      'send.created',
      'send.updated',
      'send.deleted',
      'source.deleted',
      'permissions.enabled',
      'grant.created',
      'grant.revoked',
      'permissions.disabled',
    ]);
    const created = events.find((e) => e.action === 'pat.created') as Json;
    expect(created).toMatchObject({
      object: 'audit_event',
      target: { type: 'pat', id: pat.body.id },
      actor: { kind: 'user', user: api.home.owner.id, request_id: requestIds['pat.created'] },
    });
    // Every credential's creation carries the same details, wherever it was made.
    expect(created.details).toEqual({ name: 'ci', scopes: ['query:read'], expires: null, user: api.home.owner.id });
    expect(events.find((e) => e.action === 'service_key.created')?.details).toEqual({
      name: 'etl',
      scopes: ['query:read'],
      expires: null,
    });
    expect(events.find((e) => e.action === 'pat.revoked')?.details).toEqual({ name: 'ci', user: api.home.owner.id });
    expect(events.at(-1)).toMatchObject({
      action: 'pat.created',
      actor: { kind: 'local_admin' },
      details: { name: 'local owner (this home)', user: api.home.owner.id },
    });
    const me = await call('GET', '/whoami');
    expect(created.actor.credential).toBe(me.body.credential.id);
    expect(typeof created.actor.client_address).toBe('string');
    expect(events.find((e) => e.action === 'source.credentials_changed')?.details).toEqual({ fields: ['password'] });
    expect(events.find((e) => e.action === 'source.destination_changed')?.details).toEqual({ fields: ['database'] });
    expect(events.find((e) => e.action === 'send.created')?.details).toEqual({
      name: 'feed',
      destination: { type: 'webhook', host: '127.0.0.1' },
    });
    expect(events.find((e) => e.action === 'grant.created')).toMatchObject({
      actor: { kind: 'local_admin', credential: null, request_id: null },
      details: { schema: 'demo', table: 'orders', grantee_kind: 'user' },
    });
    const text = JSON.stringify(log.body);
    for (const secret of secrets) expect(text).not.toContain(secret);

    // Filtered and paged.
    const revocations = await call('GET', '/audit_events?action=pat.revoked');
    expect(revocations.body.data.map((e: Json) => e.target.id)).toEqual([pat.body.id]);
    const first = await call('GET', '/audit_events?limit=2');
    expect(first.body.has_more).toBe(true);
    const second = await call('GET', `/audit_events?limit=2&starting_after=${first.body.data[1].id}`);
    expect(second.body.data[0].id).toBe(events[2]?.id);
  });

  it('is for owners: a member is refused, and a cursor of nothing is a 400', async () => {
    const member = await newMember(api, ['query:read']);
    const refused = await call('GET', '/audit_events', undefined, member.token);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('owner_required');
    const bad = await call('GET', '/audit_events?starting_after=aud_nothing');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_cursor', param: 'starting_after' });
    // An action the log never records is refused, not answered with an empty page a misspelling would look like.
    const misspelt = await call('GET', '/audit_events?action=pat.creatd');
    expect(misspelt.status).toBe(400);
    expect(misspelt.body.error).toMatchObject({ code: 'parameter_invalid', param: 'action' });
  });
});
