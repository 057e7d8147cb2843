import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { OutboundPolicy } from './outbound.js';

export interface PostOutcome {
  status: number;
  headers: Record<string, string | string[] | undefined>;
}

/** What of an answer's body is read (and dropped) before its connection is closed. */
const ANSWER_BODY_READ_BYTES = 64 * 1024;

/**
 * One POST; its outcome is the answer's status and headers, known as soon as they arrive. Its body is read and
 * dropped, up to ANSWER_BODY_READ_BYTES, then the connection is closed: a receiver that answered 200 and then sent a
 * body without end had its accepted batch waited on until the timeout, failed, and sent again at each retry.
 * Redirects are not followed. With `policy`, the connection is made only to an address its rules allow, resolved at
 * connect time (the check and the connection see one address).
 */
export function postOnce(
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  policy?: OutboundPolicy,
): Promise<PostOutcome> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
        signal,
        ...(policy ? { lookup: policy.lookup() } : {}),
      },
      (res) => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers });
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > ANSWER_BODY_READ_BYTES) res.destroy();
        });
        // The outcome is settled: a body cut short, or aborted by the caller's signal later, changes nothing.
        res.on('error', () => undefined);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
