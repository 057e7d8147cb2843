import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_BODY_LENGTH = 40;

export type SecretPrefix = 'pat' | 'nsk' | 'tak' | 'opr';

/** A new bearer secret: prefix, underscore, 40 base62 characters (about 238 bits). */
export function newSecret(prefix: SecretPrefix): string {
  // Rejection sampling keeps every character equally likely.
  let body = '';
  while (body.length < SECRET_BODY_LENGTH) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && body.length < SECRET_BODY_LENGTH) body += BASE62[byte % 62];
    }
  }
  return `${prefix}_${body}`;
}

/** Only this hash is stored; the secret itself is shown once and never kept. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** The last four characters, so people can tell their tokens apart without the secret being kept. */
export function secretHint(secret: string): string {
  return secret.slice(-4);
}

export function looksLikeSecret(value: string, prefixes: readonly SecretPrefix[]): boolean {
  const match = /^([a-z]{3})_[0-9A-Za-z]{20,100}$/.exec(value);
  return match !== null && (prefixes as readonly string[]).includes(match[1] ?? '');
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
