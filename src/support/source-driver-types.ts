import type pg from 'pg';
import type { from as CopyFrom, to as CopyTo } from 'pg-copy-streams';

/** node-postgres and its COPY streams: one bundle, as the PostgreSQL store, connector and syncs use them together. */
export interface PgDriver {
  pg: typeof pg;
  copyStreams: { to: typeof CopyTo; from: typeof CopyFrom };
}

/**
 * @vlasky/zongji: its reader, and the two modules of its own that lake's row image reader reaches into (the row
 * event classes and `readMysqlValue`), the same module instances the reader uses.
 */
export interface ZongjiDriver {
  ZongJi: unknown;
  rowsEvent: Record<string, unknown>;
  common: Record<string, unknown>;
}
