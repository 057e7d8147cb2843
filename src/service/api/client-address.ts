import { BlockList } from 'node:net';
import { ipFamily, plainAddress } from '../net/addresses.js';

/**
 * Where a request came from, for the limits no credential can carry (failed authentications, public endpoints):
 * the socket's peer address; or, when that peer is a proxy the operator named in LAKE_TRUSTED_PROXIES, the
 * nearest address in X-Forwarded-For that is not itself a trusted proxy. A header from anyone else is ignored, so a
 * client cannot choose the address it is limited as.
 */
export class ClientAddresses {
  private readonly trusted = new BlockList();
  private readonly any: boolean;

  constructor(trustedProxies: readonly string[]) {
    for (const entry of trustedProxies) {
      const [address, bits] = entry.split('/') as [string, string | undefined];
      const plain = plainAddress(address);
      if (bits === undefined) this.trusted.addAddress(plain.address, plain.family);
      else this.trusted.addSubnet(plain.address, Number(bits), plain.family);
    }
    this.any = trustedProxies.length > 0;
  }

  /** LAKE_TRUSTED_PROXIES: a comma list of addresses and CIDR blocks; a malformed entry is an error at start. */
  static fromEnv(env: NodeJS.ProcessEnv): ClientAddresses {
    const entries = (env.LAKE_TRUSTED_PROXIES ?? '')
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean);
    for (const entry of entries) {
      const [address, bits] = entry.split('/') as [string, string | undefined];
      const max = ipFamily(address) === 6 ? 128 : 32;
      if (ipFamily(address) === 0 || (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= max))) {
        throw new Error(
          `LAKE_TRUSTED_PROXIES: '${entry.slice(0, 64)}' is not an address or CIDR block (10.0.0.5, 10.0.0.0/8, fd00::/8).`,
        );
      }
    }
    return new ClientAddresses(entries);
  }

  /** The client's address, given the socket's peer (undefined in process: local mode) and X-Forwarded-For. */
  of(peer: string | undefined, forwardedFor: string | undefined): string {
    if (peer === undefined) return 'local';
    let client = plainAddress(peer);
    if (!this.any || !this.isTrusted(client.address, client.family) || !forwardedFor) return client.address;
    const hops = forwardedFor
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean);
    // From the right: each trusted proxy vouches for the hop before it; the first it cannot vouch for is the client.
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i] as string;
      if (ipFamily(hop) === 0) break;
      client = plainAddress(hop);
      if (!this.isTrusted(client.address, client.family)) break;
    }
    return client.address;
  }

  /** Whether a socket's peer is a proxy the operator named (its connections carry many clients'). */
  isProxy(peer: string): boolean {
    if (!this.any) return false;
    const plain = plainAddress(peer);
    return this.isTrusted(plain.address, plain.family);
  }

  private isTrusted(address: string, family: 'ipv4' | 'ipv6'): boolean {
    return this.trusted.check(address, family);
  }
}
