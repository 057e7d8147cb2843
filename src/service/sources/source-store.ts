import type { SourceTable, TestFailure } from '../connectors/types.js';
import type { MetadataDb, SqlParam } from '../store/metadata-db.js';
import { countRows } from '../store/counted.js';
import { lakeSchemaFor } from './lake-schema.js';
import type { SourceSchedule } from './source-schedule.js';
import { DUE_PER_ORGANIZATION, DUE_PER_ROUND } from '../core/schedule-rounds.js';

export interface LastTest {
  ok: boolean;
  supported: boolean;
  reason: TestFailure | null;
  at: number;
}

export interface SourceRecord {
  id: string;
  organizationId: string;
  name: string;
  connector: string;
  config: Record<string, unknown>;
  /** Sealed credentials; opened only by the service when it connects. */
  sealedSecrets: string | null;
  /** Which credentials are set, the only thing responses say about them. */
  secretsSet: string[];
  tables: SourceTable[];
  discovered: number | null;
  lastTest: LastTest | null;
  paused: boolean;
  /** The lake schema its syncs write into, fixed when it was created: no other source may write there. */
  lakeSchema: string;
  /** When it syncs by itself (lake serve runs the schedules); null when only on request. */
  schedule: ScheduleSetting | null;
  /** Its CDC replication slot as the last sync saw it; null when it has none. */
  cdcSlot: CdcSlotReport | null;
  created: number;
  updated: number;
}

/** A source's CDC slot as a sync last saw it on the source. */
export interface CdcSlotReport {
  slot: string;
  publication: string;
  confirmedLsn: string;
  /** WAL the source keeps for the slot, in bytes. */
  retainedWalBytes: number;
  walStatus: string | null;
  /** Epoch seconds. */
  checked: number;
  /** Set when the retained WAL passed the source's limit (slot_wal_warning_mb). */
  warning: string | null;
}

/** A schedule as kept: what it is, its next due time, and who set it (a scheduled sync is their job). */
export interface ScheduleSetting {
  schedule: SourceSchedule;
  /** Epoch seconds; null when it will not come due again (a cron expression past its last date). */
  nextSync: number | null;
  principalId: string;
  credentialId: string;
}

interface SourceRow {
  id: string;
  organization_id: string;
  name: string;
  connector: string;
  config: string;
  secrets: string | null;
  secrets_set: string;
  tables: string;
  discovered: number | null;
  last_test: string | null;
  paused: number;
  destination_schema: string | null;
  schedule: string | null;
  next_sync: number | null;
  schedule_principal_id: string | null;
  schedule_credential_id: string | null;
  cdc_slot: string | null;
  created: number;
  updated: number;
}

const toRecord = (row: SourceRow): SourceRecord => ({
  id: row.id,
  organizationId: row.organization_id,
  name: row.name,
  connector: row.connector,
  config: JSON.parse(row.config) as Record<string, unknown>,
  sealedSecrets: row.secrets,
  secretsSet: JSON.parse(row.secrets_set) as string[],
  tables: JSON.parse(row.tables) as SourceTable[],
  discovered: row.discovered,
  lastTest: row.last_test === null ? null : (JSON.parse(row.last_test) as LastTest),
  paused: row.paused === 1,
  // Sources older than fixed schemas wrote where their name led, as lakeSchemaFor still leads.
  lakeSchema: row.destination_schema ?? (lakeSchemaFor(row.name) || 'source'),
  schedule:
    row.schedule === null
      ? null
      : {
          schedule: JSON.parse(row.schedule) as SourceSchedule,
          nextSync: row.next_sync === null ? null : Number(row.next_sync),
          principalId: row.schedule_principal_id as string,
          credentialId: row.schedule_credential_id as string,
        },
  cdcSlot: row.cdc_slot === null || row.cdc_slot === undefined ? null : (JSON.parse(row.cdc_slot) as CdcSlotReport),
  created: row.created,
  updated: row.updated,
});

const now = (): number => Math.floor(Date.now() / 1000);

const SCHEDULE_COLUMNS = 'schedule, next_sync, schedule_principal_id, schedule_credential_id';
const scheduleValues = (setting: ScheduleSetting | null): SqlParam[] =>
  setting === null
    ? [null, null, null, null]
    : [JSON.stringify(setting.schedule), setting.nextSync, setting.principalId, setting.credentialId];

/** A source as lists show it: its table configuration counted, not read (it can be large). */
export interface SourceSummary extends Omit<SourceRecord, 'tables'> {
  tableCount: number;
  enabledTableCount: number;
}

const SUMMARY_COLUMNS =
  'id, organization_id, name, connector, config, secrets, secrets_set, discovered, last_test, paused, destination_schema, schedule, next_sync, schedule_principal_id, schedule_credential_id, cdc_slot, created, updated';

/** The table counts, computed by the database from the stored JSON: a list never parses table configurations. */
const TABLE_COUNTS = {
  sqlite: `json_array_length(tables) AS table_count, (SELECT count(*) FROM json_each(sources.tables) WHERE json_extract(value, '$.enabled') = 1) AS enabled_table_count`,
  postgres: `json_array_length(tables::json) AS table_count, (SELECT count(*) FROM json_array_elements(sources.tables::json) e WHERE (e->>'enabled')::boolean) AS enabled_table_count`,
};

/** Sources of the metadata store. Deleted ones keep their row (soft delete) and are invisible to every read here. */
/** What a source's name and schema are decided by. */
interface SourceNaming {
  id: string;
  name: string;
  destination_schema: string | null;
  deleted: number | null;
  created: number;
}

/** A live source holds its schema and its name's; a deleted one only the schema its data stays in. */
function heldSchemasOf(row: SourceNaming): string[] {
  const schema = row.destination_schema ?? (lakeSchemaFor(row.name) || 'source');
  return row.deleted === null ? [schema, lakeSchemaFor(row.name)] : [schema];
}

export class SourceStore {
  constructor(private readonly db: MetadataDb) {}

  async insert(
    record: Omit<SourceRecord, 'created' | 'updated' | 'lastTest' | 'paused' | 'cdcSlot'>,
  ): Promise<SourceRecord> {
    const at = now();
    await this.db.run(
      `INSERT INTO sources (id, organization_id, name, connector, config, secrets, secrets_set, tables, discovered, paused, destination_schema, ${SCHEDULE_COLUMNS}, created, updated)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)`,
      [
        record.id,
        record.organizationId,
        record.name,
        record.connector,
        JSON.stringify(record.config),
        record.sealedSecrets,
        JSON.stringify(record.secretsSet),
        JSON.stringify(record.tables),
        record.discovered,
        record.lakeSchema,
        ...scheduleValues(record.schedule),
        at,
        at,
      ],
    );
    return (await this.get(record.organizationId, record.id)) as SourceRecord;
  }

  /** The organization's sources that are not deleted (what its ceiling counts). */
  async countLive(organizationId: string): Promise<number> {
    return countRows(this.db, 'SELECT count(*) AS n FROM sources WHERE organization_id = ? AND deleted IS NULL', [
      organizationId,
    ]);
  }

  /** A source by id, deleted or not: what its logs and syncs are about stays answerable after it is deleted. */
  async getIncludingDeleted(id: string): Promise<SourceRecord | undefined> {
    const row = await this.db.get<SourceRow>('SELECT * FROM sources WHERE id = ?', [id]);
    return row && toRecord(row);
  }

  async get(organizationId: string, id: string): Promise<SourceRecord | undefined> {
    const row = await this.db.get<SourceRow>(
      'SELECT * FROM sources WHERE id = ? AND organization_id = ? AND deleted IS NULL',
      [id, organizationId],
    );
    return row && toRecord(row);
  }

  async list(
    organizationId: string,
    limit: number,
    after?: { id: string; created: number },
  ): Promise<{ data: SourceSummary[]; hasMore: boolean }> {
    const rows = await this.db.all<Omit<SourceRow, 'tables'> & { table_count: number; enabled_table_count: number }>(
      `SELECT ${SUMMARY_COLUMNS}, ${TABLE_COUNTS[this.db.dialect]} FROM sources WHERE organization_id = ? AND deleted IS NULL AND (CAST(? AS TEXT) IS NULL OR created < ? OR (created = ? AND id < ?))
         ORDER BY created DESC, id DESC LIMIT ?`,
      [organizationId, after?.id ?? null, after?.created ?? 0, after?.created ?? 0, after?.id ?? '', limit + 1],
    );
    return {
      data: rows.slice(0, limit).map((row) => {
        const { tables: _none, ...record } = toRecord({ ...row, tables: '[]' });
        return { ...record, tableCount: Number(row.table_count), enabledTableCount: Number(row.enabled_table_count) };
      }),
      hasMore: rows.length > limit,
    };
  }

  /** Where a page of sources starts: the source's id and creation time, without its tables. */
  async cursorOf(organizationId: string, id: string): Promise<{ id: string; created: number } | undefined> {
    return this.db.get<{ id: string; created: number }>(
      'SELECT id, created FROM sources WHERE id = ? AND organization_id = ? AND deleted IS NULL',
      [id, organizationId],
    );
  }

  async update(
    id: string,
    changes: Partial<
      Pick<
        SourceRecord,
        | 'name'
        | 'lakeSchema'
        | 'config'
        | 'sealedSecrets'
        | 'secretsSet'
        | 'tables'
        | 'discovered'
        | 'lastTest'
        | 'paused'
        | 'schedule'
        | 'cdcSlot'
      >
    >,
  ): Promise<void> {
    const sets: string[] = ['updated = ?'];
    const values: SqlParam[] = [now()];
    const column = (name: string, value: SqlParam): void => {
      sets.push(`${name} = ?`);
      values.push(value);
    };
    if (changes.name !== undefined) {
      column('name', changes.name);
      // A source made before schemas were fixed wrote where its name led: a rename must not move it.
      sets.push('destination_schema = coalesce(destination_schema, ?)');
      values.push(changes.lakeSchema ?? null);
    }
    if (changes.config !== undefined) column('config', JSON.stringify(changes.config));
    if (changes.sealedSecrets !== undefined) column('secrets', changes.sealedSecrets);
    if (changes.secretsSet !== undefined) column('secrets_set', JSON.stringify(changes.secretsSet));
    if (changes.tables !== undefined) column('tables', JSON.stringify(changes.tables));
    if (changes.discovered !== undefined) column('discovered', changes.discovered);
    if (changes.lastTest !== undefined) column('last_test', JSON.stringify(changes.lastTest));
    if (changes.paused !== undefined) column('paused', changes.paused ? 1 : 0);
    if (changes.cdcSlot !== undefined)
      column('cdc_slot', changes.cdcSlot === null ? null : JSON.stringify(changes.cdcSlot));
    if (changes.schedule !== undefined) {
      const values = scheduleValues(changes.schedule);
      SCHEDULE_COLUMNS.split(', ').forEach((name, i) => column(name, values[i] ?? null));
    }
    await this.db.run(`UPDATE sources SET ${sets.join(', ')} WHERE id = ? AND deleted IS NULL`, [...values, id]);
  }

  /**
   * The source, deleted ones included (their data stays in the lake), that holds a lake schema or whose name leads
   * to it, other than `except`: the oldest one.
   */
  async schemaHolder(
    organizationId: string,
    schema: string,
    except?: string,
  ): Promise<{ id: string; name: string; deleted: boolean; created: number } | undefined> {
    const held = (await this.namings(organizationId)).find(
      (row) => row.id !== except && heldSchemasOf(row).includes(schema),
    );
    return held && { id: held.id, name: held.name, deleted: held.deleted !== null, created: held.created };
  }

  /** Every lake schema the organization's sources hold, deleted ones included (see schemaHolder). */
  async heldSchemas(organizationId: string): Promise<Set<string>> {
    return new Set((await this.namings(organizationId)).flatMap(heldSchemasOf));
  }

  /** Without the table configurations: every source of the organization is read. */
  private namings(organizationId: string): Promise<SourceNaming[]> {
    return this.db.all<SourceNaming>(
      'SELECT id, name, destination_schema, deleted, created FROM sources WHERE organization_id = ? ORDER BY created, id',
      [organizationId],
    );
  }

  async softDelete(id: string): Promise<void> {
    await this.db.run('UPDATE sources SET deleted = ?, updated = ? WHERE id = ? AND deleted IS NULL', [
      now(),
      now(),
      id,
    ]);
  }

  /**
   * Live sources whose schedule is due at `nowSeconds`, across active organizations (the scheduler of lake serve); a
   * deactivated organization's schedules wait until it is reactivated.
   */
  async due(nowSeconds: number): Promise<SourceRecord[]> {
    // Each organization's oldest few, so that one with thousands due cannot hold back another's (schedule-rounds).
    const rows = await this.db.all<SourceRow>(
      `SELECT * FROM (
         SELECT s.*, ROW_NUMBER() OVER (PARTITION BY s.organization_id ORDER BY s.next_sync, s.id) AS due_rank
           FROM sources s
          WHERE s.next_sync <= ? AND s.paused = 0 AND s.deleted IS NULL
            AND s.organization_id NOT IN (SELECT id FROM organizations WHERE deactivated IS NOT NULL)) d
        WHERE d.due_rank <= ?
        ORDER BY d.next_sync, d.id LIMIT ?`,
      [nowSeconds, DUE_PER_ORGANIZATION, DUE_PER_ROUND],
    );
    return rows.map(toRecord);
  }

  /**
   * Takes one due tick of a source's schedule: moves next_sync on only if it still holds the value this scheduler
   * read. Of several schedulers (replicas) reading the same due source, exactly one gets true.
   */
  async claimTick(id: string, seenNextSync: number, nextSync: number | null): Promise<boolean> {
    const result = await this.db.run(
      'UPDATE sources SET next_sync = ? WHERE id = ? AND next_sync = ? AND paused = 0 AND deleted IS NULL',
      [nextSync, id, seenNextSync],
    );
    return result.changes === 1;
  }

  /** True while a sync of the source is queued or running. */
  async hasLiveSync(id: string): Promise<boolean> {
    return (
      (await this.db.get(
        `SELECT 1 FROM syncs s JOIN jobs j ON j.id = s.id WHERE s.source_id = ? AND j.status IN ('queued', 'running') LIMIT 1`,
        [id],
      )) !== undefined
    );
  }
}
