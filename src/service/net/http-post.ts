import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { OutboundPolicy } from './outbound.js';

export interface PostOutcome {
  status: number;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * One POST, its answer's body read and dropped. Redirects are not followed. With `policy`, the connection is made
 * only to an address its rules allow, resolved at connect time (the check and the connection see one address).
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
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
