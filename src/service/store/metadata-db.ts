/** A value a statement binds: every metadata column is text or a number (booleans are 0/1, times epoch numbers). */
export type SqlParam = string | number | null;

export interface RunResult {
  /** Rows the statement inserted, updated or deleted. */
  changes: number;
}

export type Dialect = 'sqlite' | 'postgres';

/**
 * The one way metadata is read and written: SQLite embedded in the home, or PostgreSQL shared by replicas.
 * Statements are written once with `?` placeholders in the SQL both dialects share; an implementation that needs
 * `$1` rewrites them. Inside `transaction`, every call (from any store) joins that transaction.
 */
export interface MetadataDb {
  readonly dialect: Dialect;
  all<T>(sql: string, params?: readonly SqlParam[]): Promise<T[]>;
  get<T>(sql: string, params?: readonly SqlParam[]): Promise<T | undefined>;
  run(sql: string, params?: readonly SqlParam[]): Promise<RunResult>;
  /**
   * Runs fn in one transaction that first takes the named locks, so check-then-act sequences naming the same lock
   * never interleave, in this process or another replica. SQLite takes its single write lock (which covers every
   * name); PostgreSQL takes a transaction-scoped advisory lock per name. Called inside a transaction, fn joins it
   * (and its locks are taken too).
   */
  transaction<T>(locks: LockName | readonly LockName[], fn: () => Promise<T>): Promise<T>;
  /**
   * Runs fn's reads against one consistent moment of the store (several statements that must agree, such as a
   * catalog's version and its tables). Takes no lock; inside a transaction, fn joins it.
   */
  snapshot<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Announces payload on channel to the listeners of every process that shares the store (PostgreSQL NOTIFY; in
   * process for SQLite), once the surrounding transaction commits, and never when it rolls back.
   */
  notify(channel: string, payload: string): Promise<void>;
  /**
   * A write whose result the caller does not need (an INSERT, UPDATE or DELETE without RETURNING; with
   * `notice`, notify()'s announcement goes with it). Inside a transaction on PostgreSQL it is held and sent together with the transaction's next
   * statement or its COMMIT, as one simple query with the parameters written as literals: one round trip for
   * several statements, in the order they were made. An error in it fails that next statement (and so the
   * transaction). Outside a transaction, or on SQLite, it runs at once.
   */
  write(sql: string, params?: readonly SqlParam[], notice?: { channel: string; payload: string }): Promise<void>;
  /**
   * One statement as a transaction of its own under these locks, in one round trip where the store allows it
   * (PostgreSQL: BEGIN with the locks, the statement and COMMIT are sent together, pipelined, the statement
   * prepared once per connection). For a statement every request pays.
   */
  allLocked<T>(locks: readonly LockName[], sql: string, params: readonly SqlParam[]): Promise<T[]>;
  /** Calls handler for each notice on channel; returns the way to stop. */
  listen(channel: string, handler: (payload: string) => void): () => void;
  /** Runs a script of statements; for migrations only. */
  execScript(sql: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * What a transaction serialises on. Names are `domain:key`; a key narrows the lock to one object (a job, a source,
 * an idempotency key), so unrelated work never waits.
 */
export type LockName = `${string}:${string}`;

export const lock = {
  job: (jobId: string): LockName => `job:${jobId}`,
  idempotencyKey: (organizationId: string, principalId: string, key: string): LockName =>
    `idempotency:${organizationId}/${principalId}/${key}`,
  /** The organization's in-flight query ceiling. */
  queryAdmission: (organizationId: string): LockName => `queries:${organizationId}`,
  sourceSyncs: (sourceId: string): LockName => `source-syncs:${sourceId}`,
  sourceNames: (organizationId: string): LockName => `source-names:${organizationId}`,
  sendRuns: (sendId: string): LockName => `send-runs:${sendId}`,
  sendNames: (organizationId: string): LockName => `send-names:${organizationId}`,
  catalog: (organizationId: string): LockName => `catalog:${organizationId}`,
  canvas: (canvasId: string): LockName => `canvas:${canvasId}`,
  /** Counting an owner's objects of one kind and adding one, so two requests cannot both take the last place. */
  objectLimit: (ownerId: string, kind: string): LockName => `object-limit:${kind}:${ownerId}`,
  bootstrap: (): LockName => 'bootstrap:home',
  collector: (): LockName => 'collector:lake',
  migrations: (): LockName => 'migrations:schema',
};
