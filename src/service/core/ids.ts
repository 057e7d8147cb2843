import { randomBytes } from 'node:crypto';

// Crockford base32: ids sort by creation time as plain strings, which keeps "newest first" cursors simple.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function encodeTime(ms: number): string {
  let out = '';
  let rest = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

function encodeRandom(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte % 32];
  return out;
}

/** The random part plus one, in base32: the next id within the same millisecond. */
function increment(random: string): string {
  const digits = [...random];
  for (let i = digits.length - 1; i >= 0; i--) {
    const value = ALPHABET.indexOf(digits[i] as string);
    if (value < 31) {
      digits[i] = ALPHABET[value + 1] as string;
      return digits.join('');
    }
    digits[i] = '0';
  }
  return encodeRandom(random.length);
}

let last = { time: -1, random: '' };

/**
 * A new id such as `org_01jd2w…`: a type prefix, a time part that sorts, and 80 random bits. Ids made in one
 * process within one millisecond still sort in the order they were made (the random part counts up, as in
 * monotonic ULIDs), so "newest first" lists never flip two things created together.
 */
export function newId(prefix: string, now: number = Date.now()): string {
  last =
    now <= last.time ? { time: last.time, random: increment(last.random) } : { time: now, random: encodeRandom(16) };
  return `${prefix}_${encodeTime(last.time)}${last.random}`;
}
