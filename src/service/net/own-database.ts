import { lookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import type { DatabaseIdentity } from '../store/database-identity.js';
import { isLoopbackOrUnspecified, plainAddress } from './addresses.js';

export interface DatabaseEndpoint {
  /** Undefined for a Unix socket or the driver's default: the server's own machine. */
  host: string | undefined;
  port: number;
  database: string;
}

/**
 * Lake's own metadata database, which no source or send may reach whatever the outbound rules say: it holds every
 * organization's credentials and sealed secrets. Refused twice: before connecting, by address, port and database
 * (every address of this machine counts as the metadata host's when that host is local); and once connected, by
 * the identity the server reports, which no alias, port forward or second interface can disguise.
 */
export class OwnDatabaseGuard {
  private own: Promise<{ addresses: Set<string>; local: boolean }> | undefined;

  constructor(
    private readonly endpoint: DatabaseEndpoint,
    private readonly ownIdentity: () => Promise<DatabaseIdentity | undefined>,
  ) {}

  /** From a PostgreSQL URL (LAKE_METADATA_URL). */
  static forUrl(url: string, ownIdentity: () => Promise<DatabaseIdentity | undefined>): OwnDatabaseGuard {
    const parsed = new URL(url);
    const host =
      decodeURIComponent(parsed.hostname).replace(/^\[|\]$/g, '') || parsed.searchParams.get('host') || undefined;
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'postgres';
    return new OwnDatabaseGuard(
      { host: host?.startsWith('/') ? undefined : host, port: Number(parsed.port || 5432), database },
      ownIdentity,
    );
  }

  /** Whether a connection to `address`:`port`, database `database` would reach the metadata database. */
  async isOwnEndpoint(address: string, port: number, database: string): Promise<boolean> {
    if (port !== this.endpoint.port || database !== this.endpoint.database) return false;
    const target = plainAddress(address);
    const own = await (this.own ??= this.resolveOwn());
    return (
      own.addresses.has(target.address) ||
      (own.local && (isLoopbackOrUnspecified(target) || localAddresses().has(target.address)))
    );
  }

  /** Whether a connected server is the metadata database (the identity as it reports it). */
  async isOwnIdentity(identity: DatabaseIdentity): Promise<boolean> {
    // The metadata store unreachable for a moment: the address check before connecting still stands.
    const own = await this.ownIdentity().catch(() => undefined);
    return own !== undefined && own.system === identity.system && own.database === identity.database;
  }

  /** The metadata host's addresses, and whether it is this machine (then every address of it counts). */
  private async resolveOwn(): Promise<{ addresses: Set<string>; local: boolean }> {
    const host = this.endpoint.host;
    const found =
      host === undefined
        ? []
        : await lookup(host, { all: true, verbatim: true }).then(
            (list) => list.map((a) => a.address),
            () => [] as string[],
          );
    const plain = found.map((a) => plainAddress(a));
    const local =
      host === undefined || plain.some((a) => isLoopbackOrUnspecified(a) || localAddresses().has(a.address));
    return { addresses: new Set(plain.map((a) => a.address)), local };
  }
}

/** Every address of this machine's interfaces, in plain form. */
function localAddresses(): Set<string> {
  return new Set(
    Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => plainAddress(i.address).address)),
  );
}
