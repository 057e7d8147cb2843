import { lakeTableNames } from '../../sources/lake-names.js';
import type { ConnectorObject, SourceObject, SyncObject } from '../../../contract/types.js';
import { refusalFor } from '../../connectors/registry.js';
import type { Connector } from '../../connectors/types.js';
import type { SourceRecord, SourceSummary } from '../../sources/source-store.js';
import type { SourceSchedule } from '../../sources/source-schedule.js';
import type { SyncView } from '../../syncs/sync-service.js';

/**
 * The sync object: its job's status and times, what was asked, and each table's phase and counts (left out of a
 * source in a list, so a list stays small whatever its sources hold).
 */
export function syncObject(sync: SyncView, withTables = true): SyncObject {
  return {
    object: 'sync',
    id: sync.id,
    source: sync.sourceId,
    status: sync.status,
    created: sync.created,
    started: sync.started,
    finished: sync.finished,
    full_refresh: sync.fullRefresh,
    requested_tables: sync.requestedTables,
    trigger: sync.trigger,
    ...(withTables ? { tables: sync.tables.map((t) => ({ ...t })) } : {}),
    rows: sync.rows,
    error: sync.error,
    job: `/jobs/${sync.id}`,
  };
}

/** What the source object says of a source whether listed or got: everything but credential values and tables. */
function sourceFields(
  source: Omit<SourceRecord, 'tables'>,
): Omit<SourceObject, 'latest_sync' | 'tables' | 'table_count' | 'enabled_table_count'> {
  return {
    object: 'source',
    id: source.id,
    name: source.name,
    connector: source.connector,
    lake_schema: source.lakeSchema,
    status: source.paused ? 'paused' : 'active',
    paused: source.paused,
    created: source.created,
    updated: source.updated,
    config: source.config,
    credentials: Object.fromEntries(source.secretsSet.map((name) => [name, 'set' as const])),
    discovered: source.discovered,
    last_test: source.lastTest && {
      supported: source.lastTest.supported,
      ok: source.lastTest.ok,
      reason: source.lastTest.reason,
      at: source.lastTest.at,
    },
    schedule: source.schedule && scheduleObject(source.schedule.schedule),
    cdc: source.cdcSlot && {
      slot: source.cdcSlot.slot,
      publication: source.cdcSlot.publication,
      confirmed_lsn: source.cdcSlot.confirmedLsn,
      retained_wal_bytes: source.cdcSlot.retainedWalBytes,
      wal_status: source.cdcSlot.walStatus,
      checked: source.cdcSlot.checked,
      warning: source.cdcSlot.warning,
    },
    next_sync_at: source.schedule && !source.paused ? source.schedule.nextSync : null,
  };
}

function scheduleObject(schedule: SourceSchedule): NonNullable<SourceObject['schedule']> {
  return 'interval' in schedule
    ? { interval: schedule.interval, cron: null, time_zone: null }
    : { interval: null, cron: schedule.cron, time_zone: schedule.timeZone };
}

/** The source object: its settings, which credentials are set (never their values), its tables, its latest sync. */
export function sourceObject(source: SourceRecord, latestSync: SyncView | null = null): SourceObject {
  const lakeTables = lakeTableNames(source);
  return {
    ...sourceFields(source),
    latest_sync: latestSync && syncObject(latestSync),
    table_count: source.tables.length,
    enabled_table_count: source.tables.filter((t) => t.enabled).length,
    tables: source.tables.map((t) => ({
      schema: t.schema,
      name: t.name,
      enabled: t.enabled,
      mode: t.mode,
      cursor_column: t.cursorColumn,
      primary_key: t.primaryKey,
      detect_deletes: t.detectDeletes === true,
      estimated_rows: t.estimatedRows,
      columns: t.columns,
      column_count: t.columnCount ?? t.columns.length,
      lake_table: lakeTables.get(`${t.schema}.${t.name}`) as string,
    })),
  };
}

/** A source in a list: counts instead of its tables, and its latest sync without each table's progress. */
export function sourceListItem(source: SourceSummary, latestSync: SyncView | null): SourceObject {
  return {
    ...sourceFields(source),
    latest_sync: latestSync && syncObject(latestSync, false),
    table_count: source.tableCount,
    enabled_table_count: source.enabledTableCount,
  };
}

export function connectorObject(connector: Connector): ConnectorObject {
  const refusal = refusalFor(connector);
  return {
    object: 'connector',
    name: connector.name,
    title: connector.title,
    auth: connector.auth,
    syncs: connector.syncs,
    staff_only: connector.staffOnly,
    alias_of: connector.aliasOf ?? null,
    live_test: connector.test !== undefined,
    accepted_by_post_sources: refusal === undefined,
    ...(refusal ? { refusal } : {}),
    fields: connector.fields.map((f) => ({
      name: f.name,
      type: f.type,
      required: f.required,
      credential: f.secret,
      description: f.description,
      ...(f.default === undefined ? {} : { default: f.default }),
      ...(f.min === undefined ? {} : { min: f.min, max: f.max }),
      ...(f.choices ? { choices: [...f.choices] } : {}),
    })),
  };
}
