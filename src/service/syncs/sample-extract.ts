import type { Lake } from '../storage/lake.js';
import { SAMPLE_BASE_ROWS } from '../connectors/sample.js';
import type { SyncReporter, TableResult, TableTask } from './types.js';

const AT = (expr: string): string => `TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_seconds((${expr}) % 31536000)`;

/** Deterministic rows for each sample table at a scale: the same scale always yields the same data. */
function sampleSql(table: string, scale: number): string {
  const accounts = SAMPLE_BASE_ROWS.accounts * scale;
  switch (table) {
    case 'accounts':
      return `SELECT i::BIGINT AS account_id, 'account ' || i AS name, (['free', 'team', 'business'])[1 + i % 3] AS plan, ${AT('i * 7919')} AS created_at FROM range(1, ${accounts + 1}) t(i)`;
    case 'invoices':
      return `SELECT i::BIGINT AS invoice_id, (1 + i % ${accounts})::BIGINT AS account_id, ((i * 37 % 100000) / 100)::DECIMAL(12,2) AS amount, ${AT('i * 3607')} AS issued_at, ${AT('i * 3607 + 86400')} AS updated_at FROM range(1, ${SAMPLE_BASE_ROWS.invoices * scale + 1}) t(i)`;
    default:
      return `SELECT i::BIGINT AS payment_id, i::BIGINT AS invoice_id, ((i * 37 % 100000) / 100)::DECIMAL(12,2) AS amount, ${AT('i * 3607 + 172800')} AS paid_at FROM range(1, ${SAMPLE_BASE_ROWS.payments * scale + 1}) t(i)`;
  }
}

/** The sample source syncs through the same snapshot commit as PostgreSQL, with DuckDB generating the rows. */
export async function syncSample(input: {
  scale: number;
  tasks: readonly TableTask[];
  lake: Lake;
  organizationId: string;
  syncedAt: string;
  reporter: SyncReporter;
  signal: AbortSignal;
}): Promise<TableResult[]> {
  const results: TableResult[] = [];
  for (const task of input.tasks) {
    if (input.signal.aborted) break;
    input.reporter.phase(task, 'extracting', { completed: 0, total: task.table.estimatedRows });
    const sql = `SELECT *, TIMESTAMPTZ '${input.syncedAt}' AS _synced_at FROM (${sampleSql(task.table.name, input.scale)})`;
    input.reporter.phase(task, 'loading');
    const committed = await input.lake.writeTable(input.organizationId, task.lakeSchema, task.lakeTable, sql, {
      notNull: 'all',
    });
    input.reporter.phase(task, 'committed', {
      completed: committed.snapshot.rowCount,
      total: committed.snapshot.rowCount,
    });
    results.push({
      task,
      rows: committed.snapshot.rowCount,
      transferred: committed.snapshot.rowCount,
      cursorValue: null,
      columns: task.table.columns.map((c) => ({ name: c.name, type: c.type })),
    });
  }
  return results;
}
