import { resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { requireCommonJs } from '../../support/load-commonjs.js';
import type { LockName, MetadataDb, RunResult, SqlParam } from './metadata-db.js';
import { Notices } from './notices.js';
import { TransactionContext } from './transaction-context.js';

/**
 * While one connection of this process holds a transaction, every connection of this process to the same file
 * waits for it with await. Blocking in SQLite's busy handler instead would stop the one thread that could finish it.
 */
interface Gate {
  busy: Promise<void> | undefined;
}
const GATES = new Map<string, Gate>();

interface TransactionScope {
  open: boolean;
  /** Notices to deliver once the transaction commits. */
  pending: [string, string][];
}

type Statement = Database.Statement<SqlParam[]>;

/** How long a statement waits for another process's lock before it fails with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 15_000;

/**
 * Turns a new file to WAL (a no-op once it is). SQLite answers SQLITE_BUSY at once, without its busy handler, when
 * another process is writing the file while it is still in rollback mode: several processes opening a new home at
 * the same moment all convert it, and one of them would fail with "database is locked". Retried here, with a short
 * sleep, for as long as a statement would wait for a lock.
 */
function switchToWal(connection: Database.Database): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    try {
      connection.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error;
      // Opening is synchronous (nothing else of this process can run before the home is open): a blocking pause.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pause);
    }
  }
}

/**
 * The embedded store: one better-sqlite3 connection per process. Statements run synchronously (fast: no thread
 * hop), so the async interface costs a resolved promise. A transaction holds the connection across awaits, so
 * while one is open, statements from other work in this process wait for it instead of landing inside it.
 * BEGIN IMMEDIATE takes SQLite's single write lock, which serialises every lock name across processes too.
 */
export class SqliteMetadataDb implements MetadataDb {
  readonly dialect = 'sqlite' as const;
  private readonly statements = new Map<string, Statement>();
  /** Marks the work inside an open transaction; `open` turns false at its end, for timers that outlive it. */
  private readonly inTransaction = new TransactionContext<TransactionScope>();
  private readonly notices = new Notices();
  constructor(
    readonly connection: Database.Database,
    /** Shared by every connection of this process to the same file. */
    private readonly gate: Gate,
  ) {}

  static open(file: string): SqliteMetadataDb {
    const SQLite = requireCommonJs('better-sqlite3') as typeof Database;
    const connection = new SQLite(file, { timeout: BUSY_TIMEOUT_MS });
    // WAL lets readers in several `lake` processes run beside one writer; the busy timeout makes a second writer
    // wait for the lock instead of failing with SQLITE_BUSY.
    connection.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    switchToWal(connection);
    connection.pragma('synchronous = NORMAL');
    connection.pragma('foreign_keys = ON');
    const key = resolve(file);
    let gate = GATES.get(key);
    if (!gate) GATES.set(key, (gate = { busy: undefined }));
    return new SqliteMetadataDb(connection, gate);
  }

  async all<T>(sql: string, params: readonly SqlParam[] = []): Promise<T[]> {
    await this.turn();
    return this.statement(sql).all(...(params as SqlParam[])) as T[];
  }

  async get<T>(sql: string, params: readonly SqlParam[] = []): Promise<T | undefined> {
    await this.turn();
    return this.statement(sql).get(...(params as SqlParam[])) as T | undefined;
  }

  async run(sql: string, params: readonly SqlParam[] = []): Promise<RunResult> {
    await this.turn();
    return { changes: this.statement(sql).run(...(params as SqlParam[])).changes };
  }

  transaction<T>(_locks: LockName | readonly LockName[], fn: () => Promise<T>): Promise<T> {
    return this.within('BEGIN IMMEDIATE', fn);
  }

  /** A deferred transaction: WAL gives it one snapshot from its first read, without the write lock. */
  snapshot<T>(fn: () => Promise<T>): Promise<T> {
    return this.within('BEGIN', fn);
  }

  private async within<T>(begin: string, fn: () => Promise<T>): Promise<T> {
    if (this.inTransaction.current()?.open) return fn();
    while (this.gate.busy) await this.gate.busy;
    let release!: () => void;
    this.gate.busy = new Promise((done) => (release = done));
    try {
      this.statement(begin).run();
      const scope: TransactionScope = { open: true, pending: [] };
      try {
        const result = await this.inTransaction.run(scope, fn);
        scope.open = false;
        this.statement('COMMIT').run();
        for (const [channel, payload] of scope.pending) queueMicrotask(() => this.notices.deliver(channel, payload));
        return result;
      } catch (error) {
        scope.open = false;
        if (this.connection.inTransaction) this.statement('ROLLBACK').run();
        throw error;
      }
    } finally {
      this.gate.busy = undefined;
      release();
    }
  }

  async notify(channel: string, payload: string): Promise<void> {
    const scope = this.inTransaction.current();
    if (scope?.open) scope.pending.push([channel, payload]);
    else queueMicrotask(() => this.notices.deliver(channel, payload));
  }

  allLocked<T>(locks: readonly LockName[], sql: string, params: readonly SqlParam[]): Promise<T[]> {
    return this.transaction(locks, () => this.all<T>(sql, params));
  }

  async write(
    sql: string,
    params: readonly SqlParam[] = [],
    notice?: { channel: string; payload: string },
  ): Promise<void> {
    // In process, a statement costs no round trip: nothing to gain by holding it.
    await this.run(sql, params);
    if (notice) await this.notify(notice.channel, notice.payload);
  }

  listen(channel: string, handler: (payload: string) => void): () => void {
    return this.notices.listen(channel, handler);
  }

  async execScript(sql: string): Promise<void> {
    await this.turn();
    this.connection.exec(sql);
  }

  async close(): Promise<void> {
    this.connection.close();
  }

  /** Waits while another piece of work in this process holds a transaction open. */
  private async turn(): Promise<void> {
    if (this.inTransaction.current()?.open) return;
    while (this.gate.busy) await this.gate.busy;
  }

  /** Compiled once per text: compiling on every request showed in profiles. None is iterated lazily or reconfigured. */
  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.connection.prepare<SqlParam[]>(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
