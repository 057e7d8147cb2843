import type { Writable } from 'node:stream';
import type pg from 'pg';
import { pgDriver } from '../../support/source-drivers.js';
import type { LockName, MetadataDb, RunResult, SqlParam } from './metadata-db.js';
import { MetadataUnavailableError, isConnectionFailure } from './unavailable.js';
import { Notices } from './notices.js';
import { TransactionContext } from './transaction-context.js';

interface TransactionScope {
  client: pg.PoolClient;
  open: boolean;
  locks: Set<LockName>;
  /**
   * Writes sent and not yet waited for (write()): the connection pipelines them, so they travel with the
   * statements after them, and their outcome is looked at before the next result is used, or at COMMIT.
   */
  pending: Promise<unknown>[];
}

const INT8 = 20;
const NUMERIC = 1700;

/** How many distinct statement texts run as named (prepared once per connection); see statement(). */
const PREPARED_STATEMENTS = 400;

/** Deadlock and serialisation failures: PostgreSQL rolled the transaction back and it can simply run again. */
const RETRYABLE = new Set(['40001', '40P01']);

/** A prepared statement whose table changed shape (a newer replica's migration): it can run again unnamed. */
function isCachedPlanChange(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return code === '0A000' && /cached plan must not change result type/.test(message ?? '');
}

/**
 * The shared store for replicas: a `pg` pool. Counts and epoch milliseconds come back as numbers (they stay far
 * below 2^53), as SQLite gives them. A transaction holds one pooled connection; every statement of the work inside
 * it (found through async context) runs on that connection.
 */
export class PostgresMetadataDb implements MetadataDb {
  readonly dialect = 'postgres' as const;
  private readonly texts = new Map<string, { text: string; name: string | undefined }>();
  private readonly scope = new TransactionContext<TransactionScope>();
  private readonly notices = new Notices();
  /** The connection that LISTENs, opened on the first listen and opened again whenever it drops. */
  private listener: pg.Client | undefined;
  private listening: Promise<void> | undefined;
  private closed = false;

  constructor(
    readonly pool: pg.Pool,
    private readonly url: string,
  ) {
    // An idle connection that the server closes (a restart) is reported here; without a listener it would crash
    // the process. The pool drops it and the next request connects again.
    pool.on('error', () => undefined);
  }

  static open(url: string, options: { max?: number } = {}): PostgresMetadataDb {
    const { Pool } = pgDriver().pg;
    const pool = new Pool({
      connectionString: url,
      max: options.max ?? 10,
      // A transaction's writes are sent without waiting for each answer (write()); a connection answers in order.
      pipeline: true,
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 30_000,
      application_name: 'lake',
      types: NUMBERS_AS_NUMBERS,
    });
    return new PostgresMetadataDb(pool, url);
  }

  async all<T>(sql: string, params: readonly SqlParam[] = []): Promise<T[]> {
    return (await this.query(sql, params)).rows as T[];
  }

  async get<T>(sql: string, params: readonly SqlParam[] = []): Promise<T | undefined> {
    return (await this.query(sql, params)).rows[0] as T | undefined;
  }

  async run(sql: string, params: readonly SqlParam[] = []): Promise<RunResult> {
    return { changes: (await this.query(sql, params)).rowCount ?? 0 };
  }

  async transaction<T>(locks: LockName | readonly LockName[], fn: () => Promise<T>): Promise<T> {
    const names = typeof locks === 'string' ? [locks] : locks;
    const outer = this.scope.current();
    if (outer?.open) {
      this.takeLocks(outer, names);
      return fn();
    }
    return this.retried(() => this.once(names, fn));
  }

  /** Runs a transaction again when PostgreSQL rolled it back for a deadlock or a serialisation failure. */
  private async retried<T>(attempt: () => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await attempt();
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (!(code && RETRYABLE.has(code)) && !isCachedPlanChange(error)) throw error;
        if (tries >= 5) throw error;
      }
    }
  }

  async notify(channel: string, payload: string): Promise<void> {
    await this.query('SELECT pg_notify(?, ?)', [channel, payload]);
  }

  async allLocked<T>(locks: readonly LockName[], sql: string, params: readonly SqlParam[]): Promise<T[]> {
    if (this.scope.current()?.open) return this.transaction(locks, () => this.all<T>(sql, params));
    // BEGIN with the locks, the statement (prepared once per connection) and COMMIT, pipelined: one wait in all.
    return this.retried(() => this.once(locks, () => this.all<T>(sql, params), 'BEGIN', true));
  }

  async write(
    sql: string,
    params: readonly SqlParam[] = [],
    notice?: { channel: string; payload: string },
  ): Promise<void> {
    const scope = this.scope.current();
    const text = notice ? notifying(sql) : sql;
    const values = notice ? [...params, notice.channel, notice.payload] : params;
    if (!scope?.open) {
      await this.query(text, values);
      return;
    }
    // Sent now, waited for with the transaction's next statement: the error, if any, is kept (not thrown) until then.
    scope.pending.push(
      this.send(scope.client, text, values).then(
        () => undefined,
        (error: unknown) => error,
      ),
    );
  }

  listen(channel: string, handler: (payload: string) => void): () => void {
    const known = this.notices.channels().includes(channel);
    const stop = this.notices.listen(channel, handler);
    // A LISTEN lost with its connection is issued again when the listener reconnects (every channel is).
    if (!known && this.listener) this.listener.query(`LISTEN "${channel}"`).catch(() => undefined);
    void this.ensureListening();
    return stop;
  }

  async snapshot<T>(fn: () => Promise<T>): Promise<T> {
    if (this.scope.current()?.open) return fn();
    return this.once([], fn, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  async execScript(sql: string): Promise<void> {
    // A script has no parameters: sent as a simple query, which may hold several statements.
    const scope = this.scope.current();
    try {
      if (scope?.open) {
        await this.settle(scope);
        await scope.client.query(sql);
      } else await this.pool.query(sql);
    } catch (error) {
      throw translate(error);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const listener = this.listener;
    this.listener = undefined;
    // Closing: a connection that is already gone needs no ending.
    await listener?.end().catch(() => undefined);
    await this.pool.end();
  }

  /**
   * Keeps one connection LISTENing to every channel this process listens on. When it drops (PostgreSQL restarted),
   * it reconnects with backoff; notices sent meanwhile are lost, which is why streams and cancellation also keep
   * their durable poll.
   */
  private ensureListening(): Promise<void> {
    if (this.listening || this.listener || this.closed) return this.listening ?? Promise.resolve();
    const { Client } = pgDriver().pg;
    this.listening = (async () => {
      for (let delay = 250; !this.closed; delay = Math.min(delay * 2, 5_000)) {
        const client = new Client({
          connectionString: this.url,
          application_name: 'lake listener',
          connectionTimeoutMillis: 5_000,
        });
        client.on('error', () => undefined);
        try {
          await client.connect();
          for (const channel of this.notices.channels()) await client.query(`LISTEN "${channel}"`);
          client.on('notification', (notice) => this.notices.deliver(notice.channel, notice.payload ?? ''));
          client.on('end', () => {
            if (this.listener === client) this.listener = undefined;
            if (!this.closed) setTimeout(() => void this.ensureListening(), 250).unref();
          });
          if (this.closed) await client.end();
          else this.listener = client;
          return;
        } catch {
          // This attempt failed already; the next one opens a new connection.
          await client.end().catch(() => undefined);
          await new Promise((resolve) => setTimeout(resolve, delay).unref());
        }
      }
    })().finally(() => (this.listening = undefined));
    return this.listening;
  }

  /**
   * One transaction on a connection of its own. With `commitBehind`, fn sends every statement before it first
   * waits (a single all() or get()), and the COMMIT is sent right behind them instead of after their answers.
   */
  private async once<T>(
    names: readonly LockName[],
    fn: () => Promise<T>,
    begin = 'BEGIN',
    commitBehind = false,
  ): Promise<T> {
    const client = await this.connect();
    const scope: TransactionScope = { client, open: true, locks: new Set(), pending: [] };
    let broken = false;
    // The pool listens for errors of idle clients only: a server that goes away while this transaction's code runs
    // between statements emits one here, which unheard would end the process.
    const lost = (): void => void (broken = true);
    client.on('error', lost);
    try {
      this.begin(scope, begin, names);
      const running = this.scope.run(scope, fn);
      if (commitBehind) sendTogether(client);
      const early = commitBehind ? client.query('COMMIT') : undefined;
      // Its answer is looked at below; a statement that failed first is the error the caller gets.
      early?.catch(() => undefined);
      const result = await running;
      // The COMMIT follows the writes not yet waited for; if one of them failed, PostgreSQL has turned the COMMIT
      // into a ROLLBACK, and the write's error is what the caller gets.
      const committed = early ?? client.query('COMMIT');
      await this.settle(scope, committed);
      if ((await committed).command !== 'COMMIT') throw new Error('The transaction was rolled back.');
      return result;
    } catch (error) {
      broken = isConnectionFailure(error);
      if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
      throw translate(error);
    } finally {
      scope.open = false;
      client.off('error', lost);
      client.release(broken);
    }
  }

  /**
   * Sends BEGIN and the transaction's locks (prepared statements, the names as parameters) without waiting for
   * them: its first statement goes behind them and is answered after them.
   */
  private begin(scope: TransactionScope, begin: string, names: readonly LockName[]): void {
    sendTogether(scope.client);
    scope.pending.push(
      scope.client.query(begin).then(
        () => undefined,
        (error: unknown) => error,
      ),
    );
    this.takeLocks(scope, names);
  }

  /**
   * Advisory locks held to the end of the transaction; sorted, so two transactions never wait on each other in a
   * circle. Sent without waiting (pipelined): every statement sent after them runs once they are held.
   */
  private takeLocks(scope: TransactionScope, names: readonly LockName[]): void {
    for (const name of [...new Set(names)].sort()) {
      if (scope.locks.has(name)) continue;
      scope.pending.push(
        this.send(scope.client, 'SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [name]).then(
          () => undefined,
          (error: unknown) => error,
        ),
      );
      scope.locks.add(name);
    }
  }

  private async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      throw translate(error);
    }
  }

  /**
   * Waits for the writes sent before (they were answered first: one connection answers in order) and throws the
   * first one's error. `next`, a statement sent after them, is then failing too; its rejection is handled here.
   */
  private async settle(scope: TransactionScope, next?: Promise<unknown>): Promise<void> {
    if (scope.pending.length === 0) return;
    const outcomes = await Promise.all(scope.pending.splice(0));
    const failed = outcomes.find((outcome) => outcome !== undefined);
    if (failed === undefined) return;
    next?.catch(() => undefined);
    throw translate(failed);
  }

  /** Sends a statement on the connection (prepared once per connection, see statement()); the promise of its result. */
  private send(client: pg.PoolClient, sql: string, params: readonly SqlParam[]): Promise<pg.QueryResult> {
    const { text, name } = this.statement(sql);
    sendTogether(client);
    return client.query({ text, name, values: storable(params) });
  }

  private async query(sql: string, params: readonly SqlParam[]): Promise<pg.QueryResult> {
    const scope = this.scope.current();
    const { text, name } = this.statement(sql);
    const config = { text, name, values: storable(params) };
    try {
      if (scope?.open) {
        // Sent behind the writes not yet waited for, which are answered first.
        sendTogether(scope.client);
        const result = scope.client.query(config);
        await this.settle(scope, result);
        return await result;
      }
      return await this.pool.query(config);
    } catch (error) {
      // A table changed under a prepared statement's result (a newer replica's migration): from now on that text
      // runs unnamed. Outside a transaction it is run again at once; inside one the transaction is retried whole.
      if (name !== undefined && isCachedPlanChange(error)) {
        this.texts.set(sql, { text, name: undefined });
        if (!scope?.open) return this.query(sql, params);
      }
      throw translate(error);
    }
  }

  /**
   * `?` placeholders as PostgreSQL's `$n` (the shared SQL has no `?` inside literals), and a name for the first
   * PREPARED_STATEMENTS texts: a named statement is parsed and planned once per connection, not at every run,
   * which is most of what a small statement costs PostgreSQL. Texts past the cap (one per organization's DuckLake
   * schema, say) run unnamed, so no connection's statement cache grows without bound.
   */
  private statement(sql: string): { text: string; name: string | undefined } {
    let statement = this.texts.get(sql);
    if (statement === undefined) {
      let n = 0;
      const text = sql.replace(/\?/g, () => `$${++n}`);
      const name = this.texts.size < PREPARED_STATEMENTS ? `lake_${this.texts.size}` : undefined;
      statement = { text, name };
      this.texts.set(sql, statement);
    }
    return statement;
  }
}

const NUMBERS_AS_NUMBERS = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    const { types } = pgDriver().pg;
    return types.getTypeParser(oid, format ?? 'text');
  }) as typeof pg.types.getTypeParser,
};

/**
 * A write that announces itself: the notice is sent whether or not a row changed, as run() then notify() would;
 * NOTIFY waits for the commit.
 */
function notifying(sql: string): string {
  return `WITH changed AS (${sql} RETURNING 1) SELECT (SELECT count(*) FROM changed) AS changes, pg_notify(?, ?)`;
}

/** Connections whose statements are being held for one write; see sendTogether(). */
const held = new WeakSet<Writable>();

/**
 * Holds what is sent on the connection until the work of this turn of the event loop is done, then writes it at
 * once: the statements a transaction sends without waiting (BEGIN, its locks, its writes, a COMMIT behind them)
 * leave in one system call instead of one each, and wake PostgreSQL's backend once. On this 2-core machine each
 * such write cost the server process ~45 µs and a wake-up of the backend (docs/performance.md, issue 36). Nothing
 * waits longer for it: the write happens before this process next waits for input.
 */
function sendTogether(client: pg.ClientBase): void {
  const stream = (client as unknown as { connection?: { stream?: Writable } }).connection?.stream;
  if (!stream || held.has(stream) || typeof stream.cork !== 'function') return;
  held.add(stream);
  stream.cork();
  process.nextTick(() => {
    held.delete(stream);
    stream.uncork();
  });
}

function translate(error: unknown): unknown {
  return isConnectionFailure(error) ? new MetadataUnavailableError(error) : error;
}

/**
 * Values PostgreSQL's text can hold. It refuses U+0000 anywhere in a text value (the statement fails: a 500, where
 * SQLite stores it), and a request's input with one is refused before it gets here (api/text-check.ts); what is left is
 * lake's own text quoting what a source sent (a failed table's reason): its NUL is kept as U+FFFD, the character
 * that stands for one that cannot be shown.
 */
function storable(params: readonly SqlParam[]): SqlParam[] {
  if (!params.some((p) => typeof p === 'string' && p.includes('\u0000'))) return params as SqlParam[];
  return params.map((p) => (typeof p === 'string' ? p.replaceAll('\u0000', '\uFFFD') : p));
}
