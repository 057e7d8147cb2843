import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../helpers/queries.js';
import { inMemory, type Harness } from '../helpers/transports.js';

/**
 * A NUL character (U+0000) in a path, a query parameter or a body: no name, id or filter lake keeps can hold one.
 * On the PostgreSQL store each of these was a 500 (PostgreSQL's text refuses the byte), on SQLite a lookup of
 * nothing or a name stored with it; now both refuse it, naming where it is.
 */
describe('a NUL character in a request', () => {
  let api: Harness;
  beforeAll(async () => {
    api = await inMemory.start();
  });
  afterAll(async () => {
    await api?.close();
  });

  const send = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> => {
    const response = await api.request(path, {
      method,
      ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Json };
  };

  it.each([
    ['GET', '/queries/qr_x%00y', 'id'],
    ['GET', '/jobs/sync_%00', 'id'],
    ['GET', '/sources/src_%00', 'id'],
    ['GET', '/users/usr_%00', 'id'],
    ['GET', '/sends/snd_%00', 'id'],
    ['GET', '/canvases/cnv_%00', 'id'],
    ['GET', '/catalog/demo/orders%00/history', 'table'],
    ['GET', '/audit_events?action=%00', 'action'],
    ['GET', '/audit_events?actor=x%00', 'actor'],
    ['GET', '/logs?source=src_%00', 'source'],
  ])('%s %s is refused, naming %s', async (method, path, param) => {
    const answer = await send(method, path);
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'parameter_invalid', param });
    expect(answer.body.error.message).toMatch(/holds a NUL character/);
  });

  it('a lone surrogate in a body (a \\uD800 escape with no pair) is refused too: it is no character, and would be kept as U+FFFD', async () => {
    const raw = async (path: string, text: string): Promise<{ status: number; body: Json }> => {
      const response = await api.request(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: text,
      });
      return { status: response.status, body: (await response.json()) as Json };
    };
    const named = await raw('/sources', '{"connector":"sample","name":"a\\ud800b"}');
    expect(named.status, JSON.stringify(named.body)).toBe(400);
    expect(named.body.error).toMatchObject({ code: 'invalid_source_parameters', param: 'name' });
    expect(named.body.error.message).toMatch(/lone surrogate \\uD800 \(at position 2\)/);
    const trailing = await raw('/queries', '{"sql":"select \'\\udc00\'"}');
    expect(trailing.status).toBe(400);
    expect(trailing.body.error).toMatchObject({ code: 'parameter_invalid', param: 'sql' });
    // Bytes that are not UTF-8 (a client that sent Latin-1) are refused, not read as U+FFFD.
    const latin1 = await api.request('/sources', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: Buffer.from('{"connector":"sample","name":"caf\xe9"}', 'latin1'),
    });
    const refused = (await latin1.json()) as Json;
    expect(latin1.status, JSON.stringify(refused)).toBe(400);
    expect(refused.error.code).toBe('invalid_json');
    expect(refused.error.message).toMatch(/not UTF-8/);
    // A pair is one character, and is kept as sent.
    const paired = await raw('/queries', '{"sql":"select \'\\ud83d\\ude00\' as s"}');
    expect(paired.status, JSON.stringify(paired.body)).toBe(202);
  });

  it('in a body, by the field that holds it, keys too', async () => {
    const named = await send('POST', '/sources', { connector: 'sample', name: 'x\u0000y' });
    expect(named.status).toBe(400);
    expect(named.body.error).toMatchObject({ code: 'invalid_source_parameters', param: 'name' });
    const keyed = await send('POST', '/sources', { connector: 'sample', name: 'ok', config: { 'a\u0000': 1 } });
    expect(keyed.status).toBe(400);
    expect(keyed.body.error.param).toBe('config.a\u0000');
    const sql = await send('POST', '/queries', { sql: 'select 1 -- \u0000' });
    expect(sql.status).toBe(400);
    expect(sql.body.error).toMatchObject({ code: 'parameter_invalid', param: 'sql' });
    // Looked for without recursion: a body nested as deep as its megabyte allows is answered, not a stack overflow.
    const deep = (inner: string): string => `${'['.repeat(200_000)}${inner}${']'.repeat(200_000)}`;
    const post = async (config: string): Promise<Response> =>
      api.request('/sources', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: `{"connector":"sample","name":"deep","config":${config}}`,
      });
    const nested = await post(deep(''));
    expect(nested.status).toBe(400);
    expect(((await nested.json()) as Json).error).toMatchObject({ code: 'invalid_source_parameters', param: 'config' });
    const nulDeep = await post(deep('"\\u0000"'));
    expect(nulDeep.status).toBe(400);
    expect(((await nulDeep.json()) as Json).error.param).toMatch(/^config(\[0\]){200000}$/);
    // Nothing was made.
    const sources = await send('GET', '/sources');
    expect(sources.body.data).toEqual([]);
  });
});
