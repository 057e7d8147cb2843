import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { LakeApp } from './app.js';
import { ERROR_CATALOGUE } from '../../../contract/errors.js';
import { newRequestId } from '../middleware/request-context.js';
import { ConnectionGate, type ConnectionLimits, type ConnectionRefusal } from './connection-gate.js';

export interface ServerOptions {
  host: string;
  port: number;
  /** One structured line per request and per lifecycle event. */
  log: (line: object) => void;
  /** The origin doc_url links name (--public-url, else this server's address once known). */
  publicOrigin?: () => string | undefined;
  /** Ceilings on open connections; none when absent (a test's server). */
  connections?: {
    limits: ConnectionLimits;
    /** Whether a peer is a trusted proxy (LAKE_TRUSTED_PROXIES), which only the total limits. */
    isProxy: (peer: string) => boolean;
    /** Counts a refusal (metrics). */
    refused?: (why: ConnectionRefusal) => void;
  };
}

/**
 * How long a client may take to send a request's headers. Node's 60 s let a client that sends them a byte at a
 * time hold its connection a minute; 20 s is ample for any real client. Bodies keep Node's 300 s (requestTimeout).
 */
export const HEADERS_TIMEOUT_MS = 20_000;
/** How often Node looks for connections past those timeouts (its default, 30 s, would let them run on that long). */
export const TIMEOUT_CHECK_MS = 2_000;

/** A Host header: a name or an address, with an optional port. */
const VALID_HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}))(?::\d{1,5})?$/;

/**
 * An error in the spec's envelope, written where the app cannot answer: the request could not be parsed, its
 * headers were too large, or its Host header names no host. It has a Request-Id like every other answer.
 */
function envelope(
  code: 'malformed_request' | 'headers_too_large' | 'rate_limited' | 'service_unavailable',
  message: string,
  origin: string,
): { status: number; requestId: string; body: string } {
  const requestId = newRequestId();
  const definition = ERROR_CATALOGUE[code];
  return {
    status: definition.status,
    requestId,
    body: JSON.stringify({
      error: { type: definition.type, code, message, doc_url: `${origin}/errors/${code}`, request_id: requestId },
    }),
  };
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  503: 'Service Unavailable',
};

/** A whole answer on the socket itself, for what never reaches the app. */
function rawAnswer(answer: { status: number; requestId: string; body: string }, extraHeaders = ''): string {
  return `HTTP/1.1 ${answer.status} ${REASONS[answer.status] ?? 'Error'}\r\nContent-Type: application/json\r\nRequest-Id: ${answer.requestId}\r\n${extraHeaders}Content-Length: ${Buffer.byteLength(answer.body)}\r\nConnection: close\r\n\r\n${answer.body}`;
}

export interface RunningServer {
  url: string;
  /** Stops taking connections, lets requests in flight finish (up to graceMs), then resolves. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Serves the app over HTTP. The request log names method, path (never the query string, which can hold signed-URL
 * signatures), status, duration and request id; headers and bodies, where credentials live, are never logged.
 */
export async function startServer(app: LakeApp, options: ServerOptions): Promise<RunningServer> {
  // The node adapter's second argument carries the socket: without it every client would share one address.
  const fetch = async (request: Request, env: unknown): Promise<Response> => {
    const started = performance.now();
    const response = await app.fetch(request, env);
    options.log({
      level: 'info',
      msg: 'request',
      method: request.method,
      path: new URL(request.url).pathname,
      status: response.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      request_id: response.headers.get('Request-Id'),
    });
    return response;
  };

  let url = '';
  const origin = (): string => options.publicOrigin?.() ?? url;
  const logError = (status: number, requestId: string, reason: string): void =>
    options.log({
      level: 'info',
      msg: 'request',
      method: null,
      path: null,
      status,
      ms: 0,
      request_id: requestId,
      reason,
    });
  const listener = getRequestListener(fetch);
  /** Connections refused at accept: answered and closing; a request read from one meanwhile is not served. */
  const refused = new WeakSet<Socket>();
  const server = createServer(
    { headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_MS },
    (req, res: ServerResponse) => {
      if (refused.has(req.socket)) {
        req.socket.destroy();
        return;
      }
      if (!VALID_HOST.test(req.headers.host ?? '')) {
        const answer = envelope(
          'malformed_request',
          'The Host header does not name a host (name or address, optional port).',
          origin(),
        );
        res.writeHead(answer.status, {
          'Content-Type': 'application/json',
          'Request-Id': answer.requestId,
          'Content-Length': Buffer.byteLength(answer.body),
          Connection: 'close',
        });
        res.end(answer.body);
        logError(answer.status, answer.requestId, 'invalid host header');
        return;
      }
      void listener(req, res);
    },
  );
  const connections = options.connections;
  if (connections) {
    const gate = new ConnectionGate(connections.limits, connections.isProxy);
    let lastRefusalLogged = 0;
    let refusedUnlogged = 0;
    // Before Node's own listener: a connection over a ceiling is answered and closed before any request is read.
    server.prependListener('connection', (socket: Socket) => {
      const admitted = socket.remoteAddress === undefined ? undefined : gate.admit(socket.remoteAddress);
      if (admitted && 'release' in admitted) {
        socket.once('close', admitted.release);
        return;
      }
      refused.add(socket);
      const why = admitted?.refused ?? 'total';
      connections.refused?.(why);
      const answer =
        why === 'client'
          ? envelope(
              'rate_limited',
              `This address has ${connections.limits.perClient} connections open to this server, as many as it may (LAKE_MAX_CONNECTIONS_PER_CLIENT). Close some, or reuse them (keep-alive), and retry.`,
              origin(),
            )
          : envelope(
              'service_unavailable',
              `This server has ${connections.limits.total} connections open, as many as it takes (LAKE_MAX_CONNECTIONS). Retry in a moment.`,
              origin(),
            );
      socket.on('error', () => socket.destroy());
      socket.end(rawAnswer(answer, 'Retry-After: 1\r\n'));
      // A client that never reads its answer does not keep the descriptor.
      socket.setTimeout(2_000, () => socket.destroy());
      // One line a second at most: a flood of connections must not become a flood of log lines.
      const now = Date.now();
      if (now - lastRefusalLogged >= 1_000) {
        lastRefusalLogged = now;
        options.log({
          level: 'warn',
          msg: 'connection refused',
          status: answer.status,
          request_id: answer.requestId,
          reason: why === 'client' ? 'client connection limit' : 'connection limit',
          refused_since_last_line: refusedUnlogged,
        });
        refusedUnlogged = 0;
      } else refusedUnlogged++;
    });
  }
  // What Node's parser refuses never reaches the app: answered here, in the envelope, instead of a bare status line.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable || refused.has(socket)) {
      socket.destroy();
      return;
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const tooSlow = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    const answer = tooLarge
      ? envelope('headers_too_large', 'The request headers are too large (16 KB at most).', origin())
      : tooSlow
        ? envelope(
            'malformed_request',
            `The request did not arrive in time: its headers within ${HEADERS_TIMEOUT_MS / 1000} s of the connection, its body within 300 s.`,
            origin(),
          )
        : envelope('malformed_request', 'The request could not be parsed as HTTP/1.1.', origin());
    socket.end(rawAnswer(answer));
    logError(
      answer.status,
      answer.requestId,
      tooLarge ? 'headers too large' : tooSlow ? 'request too slow' : 'unparsable request',
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  url = `http://${host}:${address.port}`;

  let closing: Promise<void> | undefined;
  const close = (graceMs = 10_000): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        server.closeAllConnections();
      }, graceMs);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    });
    return closing;
  };
  return { url, close };
}
