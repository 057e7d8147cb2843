import { describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import {
  installInProcessFetchClasses,
  InProcessHeaders,
  InProcessRequest,
  InProcessResponse,
} from '../../src/client/in-process-fetch-classes.js';

/** One set of fetch classes: Node's own, or the CLI's in-process ones (decision 67). */
interface FetchClasses {
  Headers: new (init?: unknown) => Headers;
  Request: new (input: string, init?: unknown) => Request;
  Response: new (body?: unknown, init?: unknown) => Response;
}

const NODE: FetchClasses = { Headers, Request, Response } as unknown as FetchClasses;
const OURS: FetchClasses = {
  Headers: InProcessHeaders,
  Request: InProcessRequest,
  Response: InProcessResponse,
} as unknown as FetchClasses;

/** What a step gives: its value, or the kind of error it throws (messages differ; the kind must not). */
async function outcome(step: () => unknown): Promise<unknown> {
  try {
    const value = await step();
    return { value };
  } catch (error) {
    return { threw: (error as Error).constructor.name };
  }
}

/** Runs a scenario with both sets of classes: what the CLI's classes give must be what Node's give. */
async function sameAsNode(scenario: (classes: FetchClasses) => Promise<unknown[]>): Promise<unknown[]> {
  const expected = await scenario(NODE);
  expect(await scenario(OURS)).toEqual(expected);
  return expected;
}

describe('the in-process fetch classes behave as Node’s own', () => {
  it('Headers: names folded, values trimmed and joined, set-cookie kept apart, sorted iteration, bad input refused', async () => {
    const results = await sameAsNode(async ({ Headers }) => {
      const headers = new Headers({ 'X-B': ' two ', 'x-a': 'one' });
      headers.append('X-A', 'again');
      headers.append('Set-Cookie', 'a=1');
      headers.append('set-cookie', 'b=2');
      const copied = new Headers(headers);
      copied.delete('x-b');
      const visited: string[] = [];
      headers.forEach((value, name) => visited.push(`${name}=${value}`));
      return [
        headers.get('x-a'),
        headers.get('X-B'),
        headers.get('missing'),
        headers.has('SET-COOKIE'),
        headers.getSetCookie(),
        [...headers],
        [...headers.keys()],
        [...headers.values()],
        visited,
        [...copied],
        [...new Headers([['k', 'v']])],
        await outcome(() => new Headers({ 'bad name': 'x' })),
        await outcome(() => new Headers({ ok: 'line\nbreak' })),
        await outcome(() => new Headers({ ok: 'emoji 😀' })),
        new Headers({ ok: 'café\u0001\u007f' }).get('ok'),
        await outcome(() => new Headers([['only-a-name']])),
        await outcome(() => headers.set('', 'x')),
        Object.prototype.toString.call(headers),
      ];
    });
    expect(results[0]).toBe('one, again');
  });

  it('Request: URL and method normalized, bodies read once, GET without a body, a body taken over by a new request', async () => {
    await sameAsNode(async ({ Request, Headers }) => {
      const post = new Request('http://local.lake/v1/queries?x=a b', {
        method: 'post',
        headers: new Headers({ Authorization: 'Bearer t' }),
        body: '{"sql":"select 1"}',
      });
      const taken = new Request(post as never, { body: new TextEncoder().encode('{"sql":"select 2"}') });
      const moved = new Request('http://local.lake/x', { method: 'PUT', body: 'moved' });
      const successor = new Request(moved as never);
      const read = new Request('http://local.lake/', { method: 'POST', body: new Uint8Array([104, 105]) });
      const cloned = new Request('http://local.lake/c', { method: 'POST', body: 'twice' });
      const copy = cloned.clone();
      return [
        post.url,
        post.method,
        new Request('http://local.lake/', { method: 'options' }).method,
        new Request('http://local.lake/', { method: 'purge' }).method,
        post.headers.get('content-type'),
        post.headers.get('authorization'),
        await taken.json(),
        taken.method,
        taken.headers.get('authorization'),
        await successor.text(),
        moved.bodyUsed,
        await read.text(),
        read.bodyUsed,
        await outcome(() => read.text()),
        await cloned.text(),
        await copy.text(),
        new Request('http://local.lake/').body,
        await new Request('http://local.lake/').text(),
        await outcome(() => new Request('http://local.lake/', { method: 'GET', body: 'x' })),
        await outcome(() => new Request('/relative')),
        await outcome(() => new Request('http://local.lake/', { method: 'bad method' })),
        await outcome(() => new Request('http://local.lake/', { method: 'TRACE' })),
        new Request('http://local.lake/', { method: 'POST', body: new URLSearchParams({ a: '1' }) }).headers.get(
          'content-type',
        ),
      ];
    });
  });

  it('Response: status rules, default content types, bodies as text, JSON, bytes and streams, clones', async () => {
    await sameAsNode(async ({ Response, Headers }) => {
      const plain = new Response('héllo');
      const withBom = new Response(new Uint8Array([0xef, 0xbb, 0xbf, 0x61]));
      const stream = new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('a,'));
            controller.enqueue(new TextEncoder().encode('b'));
            controller.close();
          },
        }),
        { status: 201, statusText: 'Created', headers: [['Content-Type', 'text/csv']] },
      );
      const original = new Response('{"ok":true}', { headers: new Headers({ 'content-type': 'application/json' }) });
      const clone = original.clone();
      const rebuilt = new Response('{"n":1}', original as never);
      const buffer = new Response(new Uint8Array([1, 2, 3]).buffer);
      const empty = new Response(null, { status: 204 });
      const staticJson = (Response as unknown as { json(data: unknown): Response }).json({ a: [1] });
      return [
        plain.status,
        plain.ok,
        plain.statusText,
        plain.headers.get('content-type'),
        await plain.text(),
        plain.bodyUsed,
        await outcome(() => plain.text()),
        await withBom.text(),
        stream.status,
        stream.statusText,
        stream.ok,
        [...stream.headers],
        await stream.text(),
        await original.json(),
        await clone.text(),
        rebuilt.headers.get('content-type'),
        rebuilt.status,
        [...new Uint8Array(await buffer.arrayBuffer())],
        buffer.headers.get('content-type'),
        empty.body,
        await empty.text(),
        new Response(null, { status: 404 }).ok,
        staticJson.headers.get('content-type'),
        await staticJson.json(),
        (await new Response('x', { headers: { 'content-type': 'text/x' } }).blob()).type,
        await outcome(() => new Response('x', { status: 204 })),
        await outcome(() => new Response('x', { status: 99 })),
        await outcome(() => new Response('x', { status: 600 })),
        await outcome(() => new Response('x', { headers: { 'a b': 'c' } })),
      ];
    });
  });

  it('a body read through its stream is used; a stream body is handed on as it is', async () => {
    await sameAsNode(async ({ Response }) => {
      const response = new Response('streamed');
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const first = await reader.read();
      return [new TextDecoder().decode(first.value), response.bodyUsed, await outcome(() => response.text())];
    });
    const source = new ReadableStream<Uint8Array>();
    expect(new InProcessResponse(source).body).toBe(source);
  });
});

describe('the app on the in-process classes', () => {
  it('answers JSON, reads bodies through the body limit, sets headers and cookies, and 404s, as with Node’s', async () => {
    // Hono names the global classes; a target object stands in for globalThis by passing the classes in by hand.
    const run = async (classes: FetchClasses): Promise<unknown[]> => {
      const app = new Hono();
      app.use(bodyLimit({ maxSize: 64 }));
      app.post('/echo', async (c) => {
        c.header('X-Seen', 'yes');
        c.header('Set-Cookie', 'a=1', { append: true });
        c.header('Set-Cookie', 'b=2', { append: true });
        return c.json({ got: await c.req.json<unknown>() }, 201);
      });
      const echo = await app.fetch(
        new classes.Request('http://local.lake/echo', {
          method: 'POST',
          body: '{"n":1}',
          headers: { 'content-type': 'application/json' },
        }) as never,
      );
      const tooBig = await app.fetch(
        new classes.Request('http://local.lake/echo', { method: 'POST', body: 'x'.repeat(100) }) as never,
      );
      const missing = await app.fetch(new classes.Request('http://local.lake/none') as never);
      return [
        echo.status,
        echo.headers.get('x-seen'),
        echo.headers.getSetCookie(),
        echo.headers.get('content-type'),
        await echo.json(),
        tooBig.status,
        missing.status,
      ];
    };
    const withNodes = await run(NODE);
    const saved = { Headers, Request, Response };
    try {
      Object.assign(globalThis, { Headers: InProcessHeaders, Request: InProcessRequest, Response: InProcessResponse });
      const withOurs = await run(OURS);
      expect(withOurs).toEqual(withNodes);
    } finally {
      Object.assign(globalThis, saved);
    }
    expect(withNodes[0]).toBe(201);
  });
});

describe('installInProcessFetchClasses', () => {
  const lazy = (): PropertyDescriptor => ({ get: () => 'node', configurable: true });

  it('installs all three while Node has built none of its own', () => {
    const target = Object.defineProperties({}, { Headers: lazy(), Request: lazy(), Response: lazy() });
    expect(installInProcessFetchClasses(target)).toBe(true);
    expect((target as { Response: unknown }).Response).toBe(InProcessResponse);
    expect((target as { Headers: unknown }).Headers).toBe(InProcessHeaders);
  });

  it('installs none once Node has made one of them, so the two sets never meet', () => {
    const target = Object.defineProperties(
      {},
      { Headers: lazy(), Request: lazy(), Response: { value: 'node', configurable: true, writable: true } },
    );
    expect(installInProcessFetchClasses(target)).toBe(false);
    expect((target as { Response: unknown }).Response).toBe('node');
    expect(Object.getOwnPropertyDescriptor(target, 'Headers')?.get).toBeTypeOf('function');
  });
});
