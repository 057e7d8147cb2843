import { createHmac, timingSafeEqual } from 'node:crypto';

/** HMAC-SHA256 with the home's signing secret: for download URLs and page cursors, nothing a client can forge. */
export class Signer {
  constructor(private readonly secret: Buffer) {}

  sign(...parts: readonly (string | number)[]): string {
    return createHmac('sha256', this.secret).update(parts.join('\n')).digest('hex');
  }

  verify(signature: string, ...parts: readonly (string | number)[]): boolean {
    const expected = Buffer.from(this.sign(...parts), 'hex');
    const given = Buffer.from(/^[0-9a-f]+$/i.test(signature) ? signature : '', 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

export const SIGNED_URL_TTL_SECONDS = 3600;

export interface SignedPath {
  path: string;
  expires: number;
}

/** `/files/results/<id>?expires=…&signature=…`: valid for one hour, for GET and HEAD, without authentication. */
export function signedResultPath(
  signer: Signer,
  queryId: string,
  now: number = Math.floor(Date.now() / 1000),
): SignedPath {
  const path = `/files/results/${queryId}`;
  const expires = now + SIGNED_URL_TTL_SECONDS;
  return { path: `${path}?expires=${expires}&signature=${signer.sign('result', path, expires)}`, expires };
}

export type SignatureCheck = 'valid' | 'invalid' | 'expired';

export function checkResultSignature(
  signer: Signer,
  path: string,
  expires: string | undefined,
  signature: string | undefined,
  now: number = Math.floor(Date.now() / 1000),
): SignatureCheck {
  if (!expires || !signature || !/^\d{1,12}$/.test(expires)) return 'invalid';
  if (!signer.verify(signature, 'result', path, Number(expires))) return 'invalid';
  return Number(expires) < now ? 'expired' : 'valid';
}

/** How long a stream URL may be opened (and reopened by EventSource) after it was made. */
export const STREAM_URL_TTL_SECONDS = 300;

/**
 * `<path>?stream_token=<credential>.<expires>.<signature>`: opens this one stream, as the credential that asked for
 * it, for five minutes, without an Authorization header, which EventSource cannot send. Bound to the exact path,
 * so it is good for nothing else; the credential is checked again (revoked, expired) each time it is used.
 */
export function signedStreamPath(
  signer: Signer,
  path: string,
  credentialId: string,
  now: number = Math.floor(Date.now() / 1000),
): SignedPath {
  const expires = now + STREAM_URL_TTL_SECONDS;
  const token = `${credentialId}.${expires}.${signer.sign('stream', path, credentialId, expires)}`;
  return { path: `${path}?stream_token=${encodeURIComponent(token)}`, expires };
}

/** The credential a stream token was made for, if it is genuine, for this path, and not expired. */
export function checkStreamToken(
  signer: Signer,
  path: string,
  token: string,
  now: number = Math.floor(Date.now() / 1000),
): { credentialId: string } | 'invalid' | 'expired' {
  const match = /^([a-z]+_[0-9A-Za-z]{1,64})\.(\d{1,12})\.([0-9a-f]{64})$/.exec(token);
  if (!match) return 'invalid';
  const [, credentialId, expires, signature] = match as unknown as [string, string, string, string];
  if (!signer.verify(signature, 'stream', path, credentialId, Number(expires))) return 'invalid';
  return Number(expires) < now ? 'expired' : { credentialId };
}
