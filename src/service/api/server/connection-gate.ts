import { readFileSync } from 'node:fs';
import { wholeNumberSetting } from '../../core/env-values.js';
import { addressBucket } from '../../net/addresses.js';

/** How many connections `lake serve` holds open at once: in all, and per client address. */
export interface ConnectionLimits {
  /** LAKE_MAX_CONNECTIONS. */
  total: number;
  /** LAKE_MAX_CONNECTIONS_PER_CLIENT; 0: none (a trusted proxy is never limited by it). */
  perClient: number;
}

/** Connections one address may hold: a browser opens 6, a CLI a few, an office behind one NAT many more. */
const PER_CLIENT_DEFAULT = 256;
const TOTAL_CEILING = 10_000;

/**
 * The process's open-file limit (its soft limit, which Node raises to the hard one as it starts), from Linux's
 * /proc; undefined elsewhere or when it says unlimited.
 */
export function openFilesLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    return Number.isSafeInteger(soft) && soft > 0 ? soft : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every socket is a file descriptor, and so is every file, worker pipe and store connection the server opens: with
 * no ceiling, one client holding idle connections (or sending its headers slowly) takes them all, and every other
 * client, and the server's own files, get EMFILE. By default half the open-file limit is left for the server.
 */
export function connectionLimitsFromEnv(
  env: Record<string, string | undefined>,
  readFileLimit: () => number | undefined = openFilesLimit,
): ConnectionLimits {
  const fileLimit = readFileLimit();
  const fallback = fileLimit === undefined ? 1_000 : Math.max(16, Math.min(TOTAL_CEILING, Math.floor(fileLimit / 2)));
  const total = wholeNumberSetting(env, 'LAKE_MAX_CONNECTIONS', fallback, 1_000_000, 1);
  // One client takes at most a quarter of the server's connections by default, however few the server has.
  const perClient = wholeNumberSetting(
    env,
    'LAKE_MAX_CONNECTIONS_PER_CLIENT',
    Math.max(1, Math.min(PER_CLIENT_DEFAULT, Math.floor(total / 4))),
    1_000_000,
  );
  return { total, perClient };
}

/** Why a connection was refused: the client's own ceiling, or the server's. */
export type ConnectionRefusal = 'client' | 'total';

/**
 * Counts the open connections, in all and per client (an IPv4 address, or an IPv6 /64, as the rate limits count
 * them), and admits a new one only under both ceilings. Peers the operator named as proxies (LAKE_TRUSTED_PROXIES)
 * carry many clients' connections, so only the total applies to them. Memory follows the open connections.
 */
export class ConnectionGate {
  private open = 0;
  private readonly byClient = new Map<string, number>();

  constructor(
    private readonly limits: ConnectionLimits,
    private readonly isProxy: (peer: string) => boolean,
  ) {}

  /** A release for an admitted connection (call it once, when it closes), or why it is refused. */
  admit(peer: string): { release: () => void } | { refused: ConnectionRefusal } {
    if (this.open >= this.limits.total) return { refused: 'total' };
    const bucket = this.limits.perClient > 0 && !this.isProxy(peer) ? addressBucket(peer) : undefined;
    const held = bucket === undefined ? 0 : (this.byClient.get(bucket) ?? 0);
    if (bucket !== undefined && held >= this.limits.perClient) return { refused: 'client' };
    this.open++;
    if (bucket !== undefined) this.byClient.set(bucket, held + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.open--;
        if (bucket === undefined) return;
        const left = (this.byClient.get(bucket) ?? 1) - 1;
        if (left <= 0) this.byClient.delete(bucket);
        else this.byClient.set(bucket, left);
      },
    };
  }
}
