import { isIPv4, isIPv6 } from 'node:net';

/**
 * 4 or 6 for an IP address, 0 for anything else: what `net.isIP` answers. Node tests IPv6 with a large regular
 * expression that V8 compiles on its first use (3–4 ms, in every local command that met a name such as `local`),
 * and every IPv6 address has a colon, so text without one is tested as IPv4 alone.
 */
export function ipFamily(text: string): 0 | 4 | 6 {
  if (text.includes(':')) return isIPv6(text) ? 6 : 0;
  return isIPv4(text) ? 4 : 0;
}

export interface PlainAddress {
  address: string;
  family: 'ipv4' | 'ipv6';
}

/** The 16 bytes of an IPv6 address, or undefined when it is not one (zone ids such as `%eth0` are dropped). */
function ipv6Bytes(text: string): number[] | undefined {
  const address = text.replace(/%.*$/, '');
  if (ipFamily(address) !== 6) return undefined;
  let tail: number[] = [];
  let body = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) {
    tail = (dotted[1] as string).split('.').map(Number);
    body = address.slice(0, -(dotted[1] as string).length);
    body = body.endsWith('::') ? body : body.replace(/:$/, '');
  }
  const [head, rest] = body.split('::') as [string, string | undefined];
  const groups = (part: string | undefined): number[] =>
    part
      ? part
          .split(':')
          .filter(Boolean)
          .map((g) => parseInt(g, 16))
      : [];
  const front = groups(head);
  const back = groups(rest);
  const missing = 8 - front.length - back.length - tail.length / 2;
  const words =
    rest === undefined ? [...front] : [...front, ...new Array<number>(Math.max(0, missing)).fill(0), ...back];
  const bytes = words.flatMap((w) => [w >> 8, w & 0xff]);
  return [...bytes, ...tail];
}

/**
 * An address as the kernel will treat it: an IPv4 address written inside IPv6 (mapped `::ffff:7f00:1`,
 * `::ffff:127.0.0.1`, the old compatible form `::127.0.0.1`, or NAT64's `64:ff9b::/96`) is the IPv4 address it
 * carries, so one rule for 127.0.0.0/8 covers every spelling.
 */
export function plainAddress(text: string): PlainAddress {
  if (ipFamily(text) === 4) return { address: text, family: 'ipv4' };
  const bytes = ipv6Bytes(text);
  if (!bytes) return { address: text, family: 'ipv6' };
  const zeros = (from: number, to: number): boolean => bytes.slice(from, to).every((b) => b === 0);
  const v4 = (): string => bytes.slice(12).join('.');
  const mapped = zeros(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff;
  // ::/96 is "compatible" except for :: and ::1 themselves, which are IPv6's own unspecified and loopback.
  const compatible = zeros(0, 12) && !zeros(12, 15);
  const nat64 = bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(4, 12);
  if (mapped || compatible || nat64) return { address: v4(), family: 'ipv4' };
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) words.push((((bytes[i] as number) << 8) | (bytes[i + 1] as number)).toString(16));
  return { address: words.join(':'), family: 'ipv6' };
}

/** Loopback or unspecified, in either family (after plainAddress). */
export function isLoopbackOrUnspecified({ address, family }: PlainAddress): boolean {
  if (family === 'ipv4') return address.startsWith('127.') || address.startsWith('0.');
  return address === '0:0:0:0:0:0:0:1' || address === '0:0:0:0:0:0:0:0';
}

/**
 * What a limit keyed by client address counts a request against: an IPv4 address, or an IPv6 address's /64 (one
 * subscriber's network: a host given one picks any of its 2^64 addresses, so a budget per address would be none).
 * Anything else (`local`) is its own.
 */
export function addressBucket(text: string): string {
  const plain = plainAddress(text);
  if (plain.family === 'ipv4') return plain.address;
  const bytes = ipv6Bytes(plain.address);
  if (!bytes) return text;
  const words: string[] = [];
  for (let i = 0; i < 8; i += 2) words.push((((bytes[i] as number) << 8) | (bytes[i + 1] as number)).toString(16));
  return `${words.join(':')}::/64`;
}
