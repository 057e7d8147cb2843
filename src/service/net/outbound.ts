import { lookup } from 'node:dns/promises';
import { BlockList } from 'node:net';
import { LakeServiceError } from '../core/errors.js';
import { ipFamily, plainAddress } from './addresses.js';
import type { OwnDatabaseGuard } from './own-database.js';

/**
 * Where the service may connect on its callers' behalf. Sources (the databases synced from) and destinations
 * (webhooks, databases sends deliver to) each have allow and deny lists of host names (`db.example.com`,
 * `*.example.com`), addresses and CIDR blocks, plus the word `unix` for Unix socket paths. A target is refused when
 * it, or any address its name resolves to, is denied; or, where an allow list is given, when neither its name nor
 * the address is on it. Every check happens before a connection is tried, so a refused target answers the same
 * whatever listens there (the connection test is no port scanner for them).
 */
export interface OutboundRules {
  allow: readonly string[];
  deny: readonly string[];
}

export interface OutboundSettings {
  sources: OutboundRules;
  destinations: OutboundRules;
}

/**
 * Refused by `lake serve` unless its operator gives another deny list: the server's own machine (loopback, the
 * unspecified addresses `0.0.0.0/8` and `::`, which connect to it, and Unix sockets), link-local addresses (where
 * clouds serve instance metadata and credentials), and the metadata names and addresses of the major clouds. Every
 * spelling of an address is checked as the address it is (IPv4-mapped and other IPv4-in-IPv6 forms, decimal and
 * short forms, names resolving there).
 */
export const SERVE_DENY = [
  '127.0.0.0/8',
  '::1/128',
  '0.0.0.0/8',
  '::/128',
  '169.254.0.0/16',
  'fe80::/10',
  'fd00:ec2::254/128',
  '100.100.100.200/32',
  'localhost',
  'metadata.google.internal',
  'metadata',
  'unix',
];

/** Local mode connects as its user would: nothing refused unless configured. */
export const LOCAL_DEFAULTS: OutboundSettings = {
  sources: { allow: [], deny: [] },
  destinations: { allow: [], deny: [] },
};
export const SERVE_DEFAULTS: OutboundSettings = {
  sources: { allow: [], deny: SERVE_DENY },
  destinations: { allow: [], deny: SERVE_DENY },
};

const list = (value: string | undefined): string[] | undefined =>
  value === undefined
    ? undefined
    : value
        .split(',')
        .map((v) => v.trim().toLowerCase())
        .filter(Boolean);

/**
 * LAKE_SOURCES_ALLOW, LAKE_SOURCES_DENY, LAKE_DESTINATIONS_ALLOW, LAKE_DESTINATIONS_DENY (comma lists). A deny list
 * given replaces the mode's default one; `lake serve`'s default is SERVE_DENY.
 */
export function outboundSettingsFromEnv(env: NodeJS.ProcessEnv, mode: 'serve' | 'local'): OutboundSettings {
  const defaults = mode === 'serve' ? SERVE_DEFAULTS : LOCAL_DEFAULTS;
  return {
    sources: {
      allow: list(env.LAKE_SOURCES_ALLOW) ?? defaults.sources.allow,
      deny: list(env.LAKE_SOURCES_DENY) ?? defaults.sources.deny,
    },
    destinations: {
      allow: list(env.LAKE_DESTINATIONS_ALLOW) ?? defaults.destinations.allow,
      deny: list(env.LAKE_DESTINATIONS_DENY) ?? defaults.destinations.deny,
    },
  };
}

interface CompiledRules {
  names: string[];
  blocks: BlockList;
  unix: boolean;
  empty: boolean;
}

function compile(entries: readonly string[]): CompiledRules {
  const blocks = new BlockList();
  const names: string[] = [];
  let unix = false;
  for (const entry of entries) {
    if (entry === 'unix') unix = true;
    else if (entry.includes('/') && ipFamily(entry.split('/')[0] as string)) {
      const [address, bits] = entry.split('/') as [string, string];
      blocks.addSubnet(address, Number(bits), ipFamily(address) === 6 ? 'ipv6' : 'ipv4');
    } else if (ipFamily(entry)) {
      const plain = plainAddress(entry);
      blocks.addAddress(plain.address, plain.family);
    } else names.push(entry);
  }
  return { names, blocks, unix, empty: entries.length === 0 };
}

const nameMatches = (names: readonly string[], host: string): boolean =>
  names.some((n) => (n.startsWith('*.') ? host.endsWith(n.slice(1)) : host === n));

export class OutboundPolicy {
  private readonly allow: CompiledRules;
  private readonly deny: CompiledRules;

  constructor(
    rules: OutboundRules,
    /** What the refusal names: "sources" or "destinations". */
    private readonly what: 'sources' | 'destinations',
    /** Lake's own metadata database (PostgreSQL), refused whatever the rules say. */
    readonly ownDatabase?: OwnDatabaseGuard,
  ) {
    this.allow = compile(rules.allow);
    this.deny = compile(rules.deny);
  }

  /**
   * The address to connect to for `host`: resolved once and checked, so the connection goes exactly where the check
   * looked (a name that resolves elsewhere a moment later changes nothing). A Unix socket path comes back as is.
   */
  async resolve(host: string): Promise<string> {
    const name = host.trim().toLowerCase();
    if (name.startsWith('/') || name.includes('/')) {
      if (this.deny.unix || (!this.allow.empty && !this.allow.unix)) throw this.refused();
      return host;
    }
    if (nameMatches(this.deny.names, name)) throw this.refused();
    // A bracketed IPv6 literal ([::1]) is the address inside; the resolver is given every other spelling, so the
    // decimal and short IPv4 forms it accepts (2130706433, 127.1, 0x7f.1) are checked as the address they reach.
    const literal = /^\[(.+)\]$/.exec(name)?.[1] ?? name;
    const addresses = ipFamily(literal)
      ? [literal]
      : await lookup(literal, { all: true, verbatim: true }).then(
          (found) => found.map((a) => a.address),
          () => [] as string[],
        );
    // As the driver's own failure would say it (ENOTFOUND: `unreachable`), with no name in the message.
    if (addresses.length === 0) throw Object.assign(new Error('the host could not be resolved'), { code: 'ENOTFOUND' });
    for (const raw of addresses) {
      const { address, family } = plainAddress(raw);
      if (this.deny.blocks.check(address, family)) throw this.refused();
      if (!this.allow.empty && !nameMatches(this.allow.names, name) && !this.allow.blocks.check(address, family))
        throw this.refused();
    }
    return addresses[0] as string;
  }

  /**
   * The address for a database connection to `host`:`port`/`database`: as resolve, and never lake's own metadata
   * database, whatever the rules allow.
   */
  async resolveDatabase(host: string, port: number, database: string): Promise<string> {
    const address = await this.resolve(host);
    if (this.ownDatabase && (await this.ownDatabase.isOwnEndpoint(address, port, database))) throw this.refused();
    return address;
  }

  /** For node:http's `lookup` option: every connection of a request goes through the same check. */
  lookup(): (
    hostname: string,
    options: object,
    callback: (error: Error | null, address: string, family: number) => void,
  ) => void {
    return (hostname, _options, callback) => {
      this.resolve(hostname).then(
        (address) => callback(null, address, ipFamily(address) === 6 ? 6 : 4),
        (error: Error) => callback(error, '', 4),
      );
    };
  }

  private refused(): LakeServiceError {
    return new LakeServiceError(
      'host_not_allowed',
      // The host is not named: for a source it is a credential, and the message may reach other members.
      `This server does not connect ${this.what} to that host: its outbound rules refuse it (the server's own machine, link-local, cloud metadata and Unix socket targets are refused by default, and lake's own database always). Ask its operator.`,
      { param: 'host' },
    );
  }
}
