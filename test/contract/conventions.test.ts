import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/service/auth/scopes.js';
import { TRANSPORTS, type Harness } from '../helpers/transports.js';

async function expectEnvelope(
  response: Response,
  status: number,
  code: string,
  type: string,
): Promise<Record<string, unknown>> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await response.json()) as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(body.error.type).toBe(type);
  expect(typeof body.error.message).toBe('string');
  expect((body.error.message as string).length).toBeGreaterThan(10);
  expect(body.error.message).not.toMatch(/\bat .*\.(js|ts):\d+/); // no stack frames
  expect(body.error.doc_url).toMatch(new RegExp(`/errors/${code}$`));
  expect(body.error.request_id).toMatch(/^req_[0-9a-f]{24}$/);
  expect(body.error.request_id).toBe(response.headers.get('request-id'));
  return body.error;
}

describe.each(TRANSPORTS)('API conventions over $name', (transport) => {
  let api: Harness;
  beforeEach(async () => {
    api = await transport.start();
  });
  afterEach(async () => {
    await api.close();
  });

  it('stamps Request-Id and Service-Version on success and error responses alike', async () => {
    const ids = new Set<string>();
    for (const response of [
      await api.request('/version'),
      await api.request('/whoami'),
      await api.request('/no-such-thing'),
    ]) {
      expect(response.headers.get('request-id')).toMatch(/^req_[0-9a-f]{24}$/);
      expect(response.headers.get('service-version')).toBe('2026-11-01');
      ids.add(response.headers.get('request-id') as string);
      await response.arrayBuffer();
    }
    expect(ids.size).toBe(3);
  });

  it('GET /version returns the contract version the header advertises', async () => {
    const response = await api.request('/version', { token: null });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.object).toBe('version');
    expect(body.version).toBe(response.headers.get('service-version'));
  });

  it('GET /whoami names the principal kind, organization, user and scopes', async () => {
    const body = (await (await api.request('/whoami')).json()) as Record<string, any>;
    expect(body.object).toBe('whoami');
    expect(body.principal_kind).toBe('user');
    expect(body.organization.id).toMatch(/^org_/);
    expect(body.organization.id).toBe(api.home.organization.id);
    expect(body.user.id).toMatch(/^usr_/);
    expect(body.user.role).toBe('owner');
    expect(body.credential.id).toMatch(/^tok_/);
    expect(body.scopes).toEqual([...SCOPES]);
    expect(JSON.stringify(body)).not.toContain(api.home.ownerToken);
  });

  it('GET /whoami with a service key names the service key and its scopes', async () => {
    const key = await api.home.credentials.issue({
      kind: 'service_key',
      organizationId: api.home.organization.id,
      userId: null,
      name: 'etl',
      scopes: ['query:read'],
    });
    expect(key.secret).toMatch(/^nsk_[0-9A-Za-z]{40}$/);
    const body = (await (await api.request('/whoami', { token: key.secret })).json()) as Record<string, any>;
    expect(body.principal_kind).toBe('service_key');
    expect(body.user).toBeNull();
    expect(body.credential).toMatchObject({ id: key.record.id, kind: 'service_key', name: 'etl' });
    expect(body.scopes).toEqual(['query:read']);
  });

  it('401 authentication_required without a credential', async () => {
    await expectEnvelope(
      await api.request('/whoami', { token: null }),
      401,
      'authentication_required',
      'authentication_error',
    );
  });

  it('401 invalid_credentials for a malformed header, an unknown token and a wrong prefix', async () => {
    await expectEnvelope(
      await api.request('/whoami', { token: null, headers: { Authorization: 'Basic abc' } }),
      401,
      'invalid_credentials',
      'authentication_error',
    );
    const unknown = `pat_${'A'.repeat(40)}`;
    const error = await expectEnvelope(
      await api.request('/whoami', { token: unknown }),
      401,
      'invalid_credentials',
      'authentication_error',
    );
    expect(JSON.stringify(error)).not.toContain(unknown);
    await expectEnvelope(
      await api.request('/whoami', { token: `xyz_${'A'.repeat(40)}` }),
      401,
      'invalid_credentials',
      'authentication_error',
    );
  });

  it('401 credentials_revoked and credentials_expired for dead tokens', async () => {
    const base = {
      kind: 'pat' as const,
      organizationId: api.home.organization.id,
      userId: api.home.owner.id,
      scopes: [...SCOPES],
    };
    const revoked = await api.home.credentials.issue({ ...base, name: 'revoked' });
    await api.home.credentials.revoke(revoked.record.id);
    await expectEnvelope(
      await api.request('/whoami', { token: revoked.secret }),
      401,
      'credentials_revoked',
      'authentication_error',
    );
    const expired = await api.home.credentials.issue({
      ...base,
      name: 'expired',
      expires: Math.floor(Date.now() / 1000) - 1,
    });
    await expectEnvelope(
      await api.request('/whoami', { token: expired.secret }),
      401,
      'credentials_expired',
      'authentication_error',
    );
  });

  it('403 missing_scope names the scope the endpoint needs', async () => {
    const narrow = await api.home.credentials.issue({
      kind: 'pat',
      organizationId: api.home.organization.id,
      userId: api.home.owner.id,
      name: 'narrow',
      scopes: ['query:read'],
    });
    const error = await expectEnvelope(
      await api.request('/pats', { token: narrow.secret }),
      403,
      'missing_scope',
      'permission_error',
    );
    expect(error.message).toContain("'pats:manage'");
  });

  it('404 route_not_found in the envelope for an unknown path, with or without a credential', async () => {
    await expectEnvelope(await api.request('/nope/deeper'), 404, 'route_not_found', 'invalid_request_error');
    await expectEnvelope(await api.request('/nope', { token: null }), 404, 'route_not_found', 'invalid_request_error');
  });

  it('a path with a trailing slash is no endpoint, and the answer names the one without it', async () => {
    // It was a 405 saying that GET is not allowed and that GET is allowed.
    const listing = await api.request('/sources/');
    expect(listing.headers.get('allow')).toBeNull();
    const error = await expectEnvelope(listing, 404, 'route_not_found', 'invalid_request_error');
    expect(error.message).toBe('There is no endpoint GET /sources/; GET /sources, without the trailing slash, is one.');
    const revoke = await api.request('/pats/tok_x/revoke/', { method: 'POST' });
    expect((await expectEnvelope(revoke, 404, 'route_not_found', 'invalid_request_error')).message).toBe(
      'There is no endpoint POST /pats/tok_x/revoke/; POST /pats/tok_x/revoke, without the trailing slash, is one.',
    );
    // Under another method, the path without the slash says which methods it has.
    const other = await api.request('/whoami/', { method: 'DELETE' });
    expect((await expectEnvelope(other, 404, 'route_not_found', 'invalid_request_error')).message).toBe(
      'There is no endpoint DELETE /whoami/; /whoami, without the trailing slash, takes GET, HEAD.',
    );
  });

  it('405 method_not_allowed with an Allow header for a known path', async () => {
    const response = await api.request('/whoami', { method: 'DELETE' });
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    await expectEnvelope(response, 405, 'method_not_allowed', 'invalid_request_error');
    const revoke = await api.request('/pats/tok_x/revoke', { method: 'GET' });
    expect(revoke.headers.get('allow')).toBe('POST');
    await expectEnvelope(revoke, 405, 'method_not_allowed', 'invalid_request_error');
  });

  it('400 invalid_json for malformed JSON and for a body that is not an object', async () => {
    const post = (body: string) =>
      api.request('/pats', { method: 'POST', body, headers: { 'Content-Type': 'application/json' } });
    await expectEnvelope(await post('{"name": "x", '), 400, 'invalid_json', 'invalid_request_error');
    await expectEnvelope(await post('[1,2]'), 400, 'invalid_json', 'invalid_request_error');
    await expectEnvelope(await post('"text"'), 400, 'invalid_json', 'invalid_request_error');
  });

  it('400 invalid_content_type for a body that does not say it is JSON', async () => {
    const response = await api.request('/pats', {
      method: 'POST',
      body: 'name=x',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    await expectEnvelope(response, 400, 'invalid_content_type', 'invalid_request_error');
  });

  it('413 request_too_large for a body over 1 MiB', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10), scopes: ['query:read'] });
    await expectEnvelope(
      await api.request('/pats', { method: 'POST', body, headers: { 'Content-Type': 'application/json' } }),
      413,
      'request_too_large',
      'invalid_request_error',
    );
  });

  it('400 parameter errors name the param', async () => {
    const post = (body: object) =>
      api.request('/pats', {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'Content-Type': 'application/json' },
      });
    expect(
      (await expectEnvelope(await post({ scopes: ['query:read'] }), 400, 'parameter_missing', 'invalid_request_error'))
        .param,
    ).toBe('name');
    expect(
      (await expectEnvelope(await post({ name: 7, scopes: [] }), 400, 'parameter_invalid', 'invalid_request_error'))
        .param,
    ).toBe('name');
    expect(
      (
        await expectEnvelope(
          await post({ name: 'n', scopes: ['nope:x'] }),
          400,
          'parameter_invalid',
          'invalid_request_error',
        )
      ).param,
    ).toBe('scopes');
    expect(
      (await expectEnvelope(await api.request('/pats?limit=0'), 400, 'parameter_invalid', 'invalid_request_error'))
        .param,
    ).toBe('limit');
    expect(
      (await expectEnvelope(await api.request('/pats?limit=abc'), 400, 'parameter_invalid', 'invalid_request_error'))
        .param,
    ).toBe('limit');
    expect(
      (
        await expectEnvelope(
          await api.request('/pats?starting_after=tok_zzz'),
          400,
          'invalid_cursor',
          'invalid_request_error',
        )
      ).param,
    ).toBe('starting_after');
  });

  it('every error doc_url resolves to the explanation of its code, without a credential', async () => {
    const response = await api.request('/errors/missing_scope', { token: null });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      object: 'error_code',
      code: 'missing_scope',
      status: 403,
      type: 'permission_error',
    });
    await expectEnvelope(
      await api.request('/errors/no_such_code', { token: null }),
      404,
      'error_code_not_found',
      'invalid_request_error',
    );
  });
});
