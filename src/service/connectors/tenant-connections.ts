import { connect, type Socket } from 'node:net';
import type pg from 'pg';

/** What node-postgres keeps of a connection that lake needs to end it for sure (not in its public types). */
interface ClientInternals {
  host: string;
  port: number;
  processID: number | null;
  secretKey: number | null;
  connection: { stream: Socket };
  _queryQueue: unknown[];
  _getActiveQuery(): unknown;
}

const internals = (client: pg.Client): ClientInternals => client as unknown as ClientInternals;

/**
 * The statement `client` is running, if any (node-postgres's own accessor: its public `activeQuery` and
 * `queryQueue` print a deprecation warning into the server's log).
 */
export const runningStatement = (client: pg.Client): unknown => internals(client)._getActiveQuery();

/** Whether `client` has a statement running or waiting to run: what its server's silence holds up. */
const waitingOn = (client: pg.Client): boolean =>
  runningStatement(client) != null || internals(client)._queryQueue.length > 0;

/** The set of connections each tenant connection belongs to, so a part of the work that finds one stuck can end them. */
const owners = new WeakMap<pg.Client, TenantConnections>();

/**
 * Ends `client` because it cannot be used again (its server ignored a cancel): the connections of its sync or send
 * end with `reason`, as an idle source's do; a connection held by no such set has its socket destroyed.
 */
export function endTenantConnection(client: pg.Client, reason: Error): void {
  const owner = owners.get(client);
  if (owner) owner.fail(reason);
  else internals(client).connection.stream.destroy();
}

/** How long a cancel request may take to be delivered before lake stops waiting for it. */
const CANCEL_REQUEST_MS = 2_000;

/** How long ending a connection politely may take before its socket is destroyed. */
const POLITE_END_MS = 1_000;

/**
 * Asks the server to stop the statement running on `client` (PostgreSQL's CancelRequest, on a connection of its
 * own to the address the client reached): a COPY abandoned part-way otherwise leaves the server sending into a
 * connection nobody reads, and a statement waiting on a lock never notices its client has gone.
 */
export function requestCancel(client: pg.Client): void {
  const { host, port, processID, secretKey } = internals(client);
  if (
    processID === null ||
    processID === undefined ||
    secretKey === null ||
    secretKey === undefined ||
    !host ||
    host.startsWith('/')
  )
    return;
  const message = Buffer.alloc(16);
  message.writeInt32BE(16, 0);
  message.writeInt32BE(80877102, 4);
  message.writeInt32BE(processID, 8);
  message.writeInt32BE(secretKey, 12);
  const socket = connect({ host, port });
  socket.setTimeout(CANCEL_REQUEST_MS, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.on('connect', () => socket.end(message));
}

/**
 * The connections lake holds on a tenant's database (a sync's on its source, a send's on its destination), and
 * the one way to end them that always works: a cancel request to the server, then the socket destroyed, so every
 * statement waiting on it fails at once (a polite `end()` would wait behind a COPY the server never finishes, or a
 * statement it never answers). A connection that receives nothing for the idle timeout, or work that runs past its
 * time bound, is ended the same way, with a reason.
 */
export class TenantConnections {
  private readonly clients = new Set<pg.Client>();
  private reason: Error | undefined;
  private stopped = false;
  private readonly deadline: NodeJS.Timeout;
  private readonly onAbort = (): void => this.stopAll();

  constructor(
    private readonly limits: { idleTimeoutMs: number; maxDurationMs: number },
    private readonly signal: AbortSignal,
    /** What the reasons name: the sync's settings, or a send's. */
    private readonly names: { work: string; peer: string; idleSetting?: string; durationSetting?: string } = {
      work: 'sync',
      peer: 'source',
      idleSetting: 'LAKE_SYNC_IDLE_TIMEOUT_SECONDS',
      durationSetting: 'LAKE_SYNC_TIMEOUT_SECONDS',
    },
  ) {
    signal.addEventListener('abort', this.onAbort, { once: true });
    this.deadline = setTimeout(
      () =>
        this.fail(
          new Error(
            `the ${names.work} was still running after ${Math.round(limits.maxDurationMs / 1000)} s, its time bound${names.durationSetting ? ` (${names.durationSetting})` : ''}`,
          ),
        ),
      limits.maxDurationMs,
    );
    this.deadline.unref();
  }

  /** Why the sync was stopped (idle source, time bound), when it was. */
  get failure(): Error | undefined {
    return this.reason;
  }

  /** True once a cancel, a failure or the end of the sync has ended every connection. */
  get ended(): boolean {
    return this.stopped || this.signal.aborted;
  }

  /** Watches a new connection (before it connects): idle for the timeout, it ends the sync's connections. */
  add(client: pg.Client): void {
    this.clients.add(client);
    owners.set(client, this);
    if (this.ended) {
      this.end(client);
      return;
    }
    const seconds = Math.round(this.limits.idleTimeoutMs / 1000);
    internals(client).connection.stream.setTimeout(this.limits.idleTimeoutMs, () => {
      // A session lake asks nothing of just then (a CDC sync's control session while the tables are copied, a
      // snapshot's other sessions between their reads) is not a silent source: its next statement starts the clock
      // again (the socket's timer restarts with any traffic).
      if (waitingOn(client))
        this.fail(
          new Error(
            `the ${this.names.peer} sent nothing for ${seconds} s${this.names.idleSetting ? ` (${this.names.idleSetting})` : ''}; its connections were closed`,
          ),
        );
    });
  }

  /** Ends every connection with this reason (the first reason given is kept). */
  fail(reason: Error): void {
    this.reason ??= reason;
    this.stopAll();
  }

  /** Ends what is left at the end of the sync: politely, and for sure after POLITE_END_MS. */
  async close(): Promise<void> {
    clearTimeout(this.deadline);
    this.signal.removeEventListener('abort', this.onAbort);
    await Promise.all(
      [...this.clients].map(async (client) => {
        const stream = internals(client).connection.stream;
        stream.setTimeout(0);
        const timer = new Promise<void>((resolve) => setTimeout(resolve, POLITE_END_MS).unref());
        // Polite first; the socket is destroyed right after in any case.
        await Promise.race([client.end().catch(() => {}), timer]);
        stream.destroy();
      }),
    );
    this.clients.clear();
  }

  private stopAll(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const client of this.clients) this.end(client);
  }

  private end(client: pg.Client): void {
    requestCancel(client);
    internals(client).connection.stream.destroy();
  }
}
