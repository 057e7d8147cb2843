import type pg from 'pg';
import { requireCommonJs } from '../../support/load-commonjs.js';
import type { LockName, MetadataDb, RunResult, SqlParam } from './metadata-db.js';
import { MetadataUnavailableError, isConnectionFailure } from './unavailable.js';
import { Notices } from './notices.js';
import { TransactionContext } from './transaction-context.js';

interface TransactionScope {
  client: pg.PoolClient;
  open: boolean;
  locks: Set<LockName>;
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
    const { Pool } = requireCommonJs('pg') as typeof pg;
    const pool = new Pool({
      connectionString: url,
      max: options.max ?? 10,
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
      await this.takeLocks(outer, names);
      return fn();
    }
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(names, fn);
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (!(code && RETRYABLE.has(code)) && !isCachedPlanChange(error)) throw error;
        if (attempt >= 5) throw error;
      }
    }
  }

  async notify(channel: string, payload: string): Promise<void> {
    await this.query('SELECT pg_notify(?, ?)', [channel, payload]);
  }

  async allLocked<T>(locks: readonly LockName[], sql: string, params: readonly SqlParam[]): Promise<T[]> {
    const literals = params.map(sqlLiteral);
    const names = [...new Set(locks)].sort();
    if (this.scope.current()?.open || literals.includes(undefined) || !names.every(plainText))
      return this.transaction(locks, () => this.all<T>(sql, params));
    let n = 0;
    const statement = sql.replace(/\?/g, () => literals[n++] as string);
    const script = [...names.map(lockStatement), statement].join(';\n');
    for (let attempt = 1; ; attempt++) {
      try {
        // A simple query of several statements runs as one transaction: the advisory locks are held until the
        // statement after them ends, and that statement's snapshot is taken once they are held.
        const results = (await this.pool.query(script)) as unknown as pg.QueryResult | pg.QueryResult[];
        const last = Array.isArray(results) ? results[results.length - 1] : results;
        return (last?.rows ?? []) as T[];
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (!(code && RETRYABLE.has(code)) || attempt >= 5) throw translate(error);
      }
    }
  }

  async runAndNotify(sql: string, params: readonly SqlParam[], channel: string, payload: string): Promise<RunResult> {
    // The notice is sent whether or not a row changed, as run() then notify() would; NOTIFY waits for the commit.
    const row = await this.get<{ changes: number }>(
      `WITH changed AS (${sql} RETURNING 1) SELECT (SELECT count(*) FROM changed) AS changes, pg_notify(?, ?)`,
      [...params, channel, payload],
    );
    return { changes: row?.changes ?? 0 };
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
      if (scope?.open) await scope.client.query(sql);
      else await this.pool.query(sql);
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
    const { Client } = requireCommonJs('pg') as typeof pg;
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

  private async once<T>(names: readonly LockName[], fn: () => Promise<T>, begin = 'BEGIN'): Promise<T> {
    const client = await this.connect();
    const scope: TransactionScope = { client, open: true, locks: new Set() };
    let broken = false;
    // The pool listens for errors of idle clients only: a server that goes away while this transaction's code runs
    // between statements emits one here, which unheard would end the process.
    const lost = (): void => void (broken = true);
    client.on('error', lost);
    try {
      await this.begin(scope, begin, names);
      const result = await this.scope.run(scope, fn);
      await client.query('COMMIT');
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
   * BEGIN and the transaction's locks as one simple query (one round trip, where each used to be its own); a lock
   * name that is not plain text for a literal (a backslash, a NUL) is taken on its own, as a parameter.
   */
  private async begin(scope: TransactionScope, begin: string, names: readonly LockName[]): Promise<void> {
    const sorted = [...new Set(names)].sort();
    if (sorted.length === 0 || !sorted.every(plainText)) {
      await scope.client.query(begin);
      return this.takeLocks(scope, sorted);
    }
    // Statements of one simple query run in order: the locks are taken sorted, as takeLocks() takes them.
    await scope.client.query([begin, ...sorted.map(lockStatement)].join('; '));
    for (const name of sorted) scope.locks.add(name);
  }

  /** Advisory locks held to the end of the transaction; sorted, so two transactions never wait on each other in a circle. */
  private async takeLocks(scope: TransactionScope, names: readonly LockName[]): Promise<void> {
    for (const name of [...names].sort()) {
      if (scope.locks.has(name)) continue;
      await scope.client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [name]);
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

  private async query(sql: string, params: readonly SqlParam[]): Promise<pg.QueryResult> {
    const scope = this.scope.current();
    const { text, name } = this.statement(sql);
    const config = { text, name, values: params as SqlParam[] };
    try {
      if (scope?.open) return await scope.client.query(config);
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
    const { types } = requireCommonJs('pg') as typeof pg;
    return types.getTypeParser(oid, format ?? 'text');
  }) as typeof pg.types.getTypeParser,
};

/** Text that is safe as a literal between single quotes (standard strings): no backslash, no NUL. */
function plainText(text: string): boolean {
  return !/[\\\0]/.test(text);
}

/** Takes an advisory lock, the name written as a literal (plainText names only). */
function lockStatement(name: string): string {
  return `SELECT pg_advisory_xact_lock(hashtextextended('${name.replace(/'/g, "''")}', 0))`;
}

/** A parameter as a literal for a simple query, or undefined when it cannot be one safely (it stays a parameter). */
function sqlLiteral(value: SqlParam): string | undefined {
  if (value === null) return 'NULL';
  if (typeof value === 'number') return Number.isFinite(value) ? `(${String(value)})` : undefined;
  return plainText(value) ? `'${value.replace(/'/g, "''")}'` : undefined;
}

function translate(error: unknown): unknown {
  return isConnectionFailure(error) ? new MetadataUnavailableError(error) : error;
}
