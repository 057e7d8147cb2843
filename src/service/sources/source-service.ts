import type { Principal } from '../auth/principal.js';
import { assertRoomFor, DEFAULT_OBJECT_LIMITS } from '../limits/object-limits.js';
import { findConnector } from '../connectors/registry.js';
import { connectPostgres, postgresClient } from '../connectors/postgres.js';
import { dropCdc } from '../connectors/postgres-slot.js';
import type { Connector, ConnectorSettings, SourceTable, TestFailure } from '../connectors/types.js';
import type { AuditLog } from '../auth/audit-log.js';
import { LakeServiceError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { lock } from '../store/metadata-db.js';
import { withLakeTables } from './lake-names.js';
import { withPlausibleNames } from './plausible-names.js';
import { lakeSchemaFor, schemaRefusal } from './lake-schema.js';
import type { OutboundPolicy } from '../net/outbound.js';
import type { PermissionStore } from '../auth/permissions.js';
import { SourceAccess } from './source-access.js';
import type { SecretBox } from './secret-box.js';
import {
  SourceStore,
  type LastTest,
  type ScheduleSetting,
  type SourceRecord,
  type SourceSummary,
} from './source-store.js';
import { nextRunAfter, parseSchedule, type ScheduleInput } from './source-schedule.js';
import { principalIdOf } from '../auth/ownership.js';
import { REAL_CLOCK, type Clock } from '../core/clock.js';
import {
  acceptedConnector,
  applyTableChanges,
  checkName,
  checkSettings,
  type SettingsInput,
  type TableChange,
} from './validate.js';

/** A new source: its connector, an optional name, and the connector's settings. */
export interface SourceCreation extends SettingsInput {
  connector: string;
  name?: string;
  /** When it syncs by itself; none when absent or null. */
  schedule?: ScheduleInput | null;
}

/** A change to a source: any of its name, settings, table settings and whether it is paused. */
export interface SourceChange extends SettingsInput {
  name?: string;
  paused?: boolean;
  tables?: TableChange[];
  /** A new schedule, or null to sync only on request. */
  schedule?: ScheduleInput | null;
}

/** A schedule set at `nowSeconds` by `principal`: its first run is the first time it comes due from then. */
function scheduleSetBy(principal: Principal, input: ScheduleInput, nowSeconds: number): ScheduleSetting {
  const schedule = parseSchedule(input);
  return {
    schedule,
    nextSync: nextRunAfter(schedule, nowSeconds),
    principalId: principalIdOf(principal),
    credentialId: principal.credentialId,
  };
}

type Discovered = Omit<SourceTable, 'enabled' | 'mode' | 'cursorColumn'>;

/**
 * Keeps what people chose for tables they already had (enabled, mode, cursor, key), takes the columns discovery
 * found now, drops tables that are gone, and adds new ones: enabled when the source is new, off afterwards, so a
 * table appearing in a database is never synced without someone opting in.
 */
export function mergeDiscovery(
  connector: string,
  current: readonly SourceTable[],
  found: readonly Discovered[],
  isNew: boolean,
): SourceTable[] {
  // Tables keep the lake table they were given; new ones get one no other table of the source has (lakeTableNames).
  return withLakeTables(connector, mergedTables(current, found, isNew));
}

function mergedTables(current: readonly SourceTable[], found: readonly Discovered[], isNew: boolean): SourceTable[] {
  return found.map((table) => {
    const before = current.find((t) => t.schema === table.schema && t.name === table.name);
    if (!before) return { ...table, enabled: isNew, mode: 'full', cursorColumn: null };
    const kept = before.lakeTable === undefined ? {} : { lakeTable: before.lakeTable };
    const listed = new Set(table.columns.map((c) => c.name));
    // Past discovery's column budget the columns are not listed: a setting naming one is kept (the sync checks it).
    const names = {
      has: (name: string): boolean => listed.has(name) || (table.columnCount ?? 0) > table.columns.length,
    };
    const cursorKept = before.cursorColumn !== null && names.has(before.cursorColumn) ? before.cursorColumn : null;
    return {
      ...table,
      enabled: before.enabled,
      // A cdc table needs no cursor: it keeps its mode while its key columns are there.
      mode:
        before.mode === 'cdc' && before.primaryKey.length > 0 && before.primaryKey.every((c) => names.has(c))
          ? 'cdc'
          : cursorKept
            ? before.mode
            : 'full',
      cursorColumn: cursorKept,
      // Delete detection goes with the incremental mode it belongs to.
      ...(cursorKept && before.mode === 'incremental' && before.detectDeletes ? { detectDeletes: true } : {}),
      primaryKey:
        before.primaryKey.length > 0 && before.primaryKey.every((c) => names.has(c))
          ? before.primaryKey
          : table.primaryKey,
      ...kept,
    };
  });
}

/**
 * The credentials a source keeps after a change: those given now, and the stored ones unless the change moves the
 * source elsewhere (a destination field given with a new value), which drops every stored credential that is not
 * itself a destination field (a password, say) and not given again. Undefined when the sealed credentials stay.
 */
export function secretsAfter(
  connector: Connector,
  source: SourceRecord,
  stored: Record<string, string>,
  config: Record<string, unknown>,
  given: Record<string, string>,
): Record<string, string> | undefined {
  const moved = connector.fields.some((f) => {
    if (!f.destination) return false;
    const now = f.secret ? given[f.name] : config[f.name];
    const before = f.secret ? stored[f.name] : source.config[f.name];
    return now !== undefined && JSON.stringify(now) !== JSON.stringify(before ?? f.default);
  });
  if (!moved && Object.keys(given).length === 0) return undefined;
  const kept = moved
    ? Object.fromEntries(
        Object.entries(stored).filter(([name]) => connector.fields.find((f) => f.name === name)?.destination === true),
      )
    : stored;
  return { ...kept, ...given };
}

export interface TestOutcome {
  supported: boolean;
  ok: boolean;
  reason: TestFailure | null;
  /** Tables this test found that the source did not have (`schema.name`), added off; none at the first discovery. */
  newTables: string[];
}

/** The tables of `found` that `current` does not have, as `schema.name`. */
export function newTableNames(current: readonly SourceTable[], found: readonly Discovered[]): string[] {
  const known = new Set(current.map((t) => `${t.schema}.${t.name}`));
  return found.map((t) => `${t.schema}.${t.name}`).filter((name) => !known.has(name));
}

/** Sources: where data comes from. Credentials are sealed on the way in and opened only to connect. */
/** The settings that say where a source connects: changing one is a destination change in the audit log. */
const DESTINATION_FIELDS = new Set(['host', 'port', 'database']);

export class SourceService {
  readonly store: SourceStore;

  /** What a restricted credential may see of sources, their syncs and logs. */
  readonly access: SourceAccess;

  constructor(
    private readonly db: import('../store/metadata-db.js').MetadataDb,
    private readonly box: SecretBox,
    permissions: PermissionStore,
    /** Whether the organization's lake has tables or views in a schema (a new source must not write among them). */
    private readonly lakeHasSchema: (organizationId: string, schema: string) => Promise<boolean> = async () => false,
    /** Where sources may connect; unrestricted when absent. */
    private readonly outbound?: OutboundPolicy,
    /** What discovery keeps of a source (LAKE_SOURCE_MAX_TABLES, LAKE_SOURCE_MAX_COLUMNS). */
    private readonly discovery?: { maxTables: number; maxColumns: number },
    /** When schedules are set from (the scheduler reads the same clock). */
    private readonly clock: Clock = REAL_CLOCK,
    /** Where a source's creation, credentials and destination changes are recorded. */
    private readonly audit?: AuditLog,
    /** How many sources an organization keeps (LAKE_ORG_MAX_SOURCES). */
    private readonly maxSources: number = DEFAULT_OBJECT_LIMITS.sources,
  ) {
    this.store = new SourceStore(db);
    this.access = new SourceAccess(permissions, this.store);
  }

  async create(principal: Principal, input: SourceCreation): Promise<SourceRecord> {
    const connector = acceptedConnector(input.connector);
    const { config, secrets } = checkSettings(connector, input, false);
    const schedule = input.schedule ? scheduleSetBy(principal, input.schedule, this.nowSeconds()) : null;
    const name =
      input.name === undefined
        ? await this.freeDefaultName(principal.organizationId, `${connector.title} source`)
        : checkName(input.name);
    const lakeSchema = lakeSchemaFor(name);
    await this.assertSchemaFree(principal.organizationId, name, lakeSchema);
    // Refused before the source's database is reached; checked again with the insert.
    assertRoomFor('sources', await this.store.countLive(principal.organizationId), this.maxSources);
    const id = newId('src');
    const reach = await this.reach({ config, secrets, tables: [] });
    // Discovery is best effort here: a source whose database is down still gets created, and a test discovers later.
    const discovered = reach ? await connector.discover?.(reach).catch(() => undefined) : undefined;
    const found = discovered && withPlausibleNames(discovered);
    // Checked again with the insert, in one write transaction: two requests for one name, or for the organization's
    // last place, cannot both pass.
    const created = await this.db.transaction(lock.sourceNames(principal.organizationId), async () => {
      assertRoomFor('sources', await this.store.countLive(principal.organizationId), this.maxSources);
      await this.assertSchemaFree(principal.organizationId, name, lakeSchema);
      return this.store.insert({
        id,
        organizationId: principal.organizationId,
        name,
        connector: connector.name,
        config,
        sealedSecrets: Object.keys(secrets).length > 0 ? this.box.seal(id, secrets) : null,
        secretsSet: Object.keys(secrets).sort(),
        tables: found ? mergeDiscovery(connector.name, [], found, true) : [],
        discovered: found ? Math.floor(Date.now() / 1000) : null,
        lakeSchema,
        schedule,
      });
    });
    await this.audit?.record(
      principal.organizationId,
      principal,
      'source.created',
      { type: 'source', id },
      { name, connector: connector.name, settings: [...Object.keys(config), ...Object.keys(secrets)].sort() },
    );
    return this.access.source(principal, created);
  }

  /**
   * A source created without a name gets its connector's, numbered from 2 when taken. The sources' schemas are read
   * once, not once a number: with hundreds of sources named alike, each creation made two reads of every source a
   * number.
   */
  private async freeDefaultName(organizationId: string, base: string): Promise<string> {
    const held = await this.store.heldSchemas(organizationId);
    for (let n = 1; ; n++) {
      const name = n === 1 ? base : `${base} ${n}`;
      if (!held.has(lakeSchemaFor(name)) && !(await this.lakeHasSchema(organizationId, lakeSchemaFor(name))))
        return name;
    }
  }

  /**
   * A source's name is unique in its organization once normalized (lakeSchemaFor), and a new source's lake schema
   * is one nobody holds: not reserved, not another source's (deleted ones included: their data stays), not a
   * schema the lake already has. `self` is the source being renamed, which keeps its schema.
   */
  private async assertSchemaFree(
    organizationId: string,
    name: string,
    schema: string,
    self?: SourceRecord,
  ): Promise<void> {
    const conflict = (why: string): LakeServiceError =>
      new LakeServiceError(
        'source_name_conflict',
        `The name '${name.slice(0, 64)}' cannot be used: ${why}. Choose another name.`,
        { param: 'name' },
      );
    const refusal = schemaRefusal(schema);
    if (refusal) throw conflict(refusal);
    const holder = await this.store.schemaHolder(organizationId, schema, self?.id);
    if (holder)
      throw conflict(
        holder.deleted
          ? `a deleted source (${holder.id}) held lake schema ${schema}, whose tables are kept`
          : `source ${holder.id} ('${holder.name.slice(0, 64)}') already has that name or lake schema ${schema}`,
      );
    if (!self && (await this.lakeHasSchema(organizationId, schema)))
      throw conflict(`lake schema ${schema} already exists`);
  }

  /** The source as the principal may see it (a restricted credential, only the tables it may read). */
  async get(principal: Principal, id: string): Promise<SourceRecord> {
    return this.access.source(principal, await this.find(principal, id));
  }

  /** The whole source, for the service's own work on it. */
  private async find(principal: Principal, id: string): Promise<SourceRecord> {
    const source = await this.store.get(principal.organizationId, id);
    if (!source)
      throw new LakeServiceError(
        'source_not_found',
        `No source '${id.slice(0, 64)}' exists in your organization (deleted sources are not found either).`,
      );
    return source;
  }

  /** A page of sources, newest first, their tables counted (see SourceStore.list). */
  async list(
    principal: Principal,
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: SourceSummary[]; hasMore: boolean }> {
    let after: { id: string; created: number } | undefined;
    if (startingAfter !== undefined) {
      after = await this.store.cursorOf(principal.organizationId, startingAfter);
      if (!after)
        throw new LakeServiceError(
          'invalid_cursor',
          'starting_after is not a next_cursor from a previous page of your sources.',
          { param: 'starting_after' },
        );
    }
    const page = await this.store.list(principal.organizationId, limit, after);
    return { ...page, data: await Promise.all(page.data.map((s) => this.access.summary(principal, s))) };
  }

  /**
   * Changes name, configuration, credentials, table settings, or `paused`. While a sync runs, a pause cannot be
   * applied (409 source_pause_failed: cancel the sync first) and other changes would change the running sync's
   * ground (409 source_config_unavailable).
   */
  async update(principal: Principal, id: string, change: SourceChange): Promise<SourceRecord> {
    const source = await this.find(principal, id);
    const connector = findConnector(source.connector) as Connector;
    const { config, secrets } = checkSettings(connector, change, true);
    // A source is never pointed where the outbound rules refuse (checked again at every connection).
    if (secrets.host !== undefined && this.outbound)
      await this.outbound.resolve(secrets.host).catch((error: unknown) => {
        if (error instanceof LakeServiceError) throw error;
      });
    const name = change.name === undefined ? undefined : checkName(change.name);
    // A rename keeps the source's lake schema; the new name must still be its own.
    if (name !== undefined) await this.assertSchemaFree(principal.organizationId, name, lakeSchemaFor(name), source);
    const tables =
      change.tables === undefined
        ? undefined
        : applyTableChanges(source.tables, change.tables, {
            connector: connector.name,
            ...(connector.tableModes ?? { cdc: true, detectDeletes: true }),
          });
    const schedule = this.scheduleAfter(principal, source, change);
    const changesConfig =
      name !== undefined || Object.keys(config).length > 0 || Object.keys(secrets).length > 0 || tables !== undefined;
    if (await this.store.hasLiveSync(id)) {
      if (change.paused === true) {
        throw new LakeServiceError(
          'source_pause_failed',
          'A sync of this source is running, so the pause cannot be applied now. Cancel the sync or wait for it, then pause.',
        );
      }
      if (changesConfig)
        throw new LakeServiceError(
          'source_config_unavailable',
          'A sync of this source is running; change it after the sync ends (or cancel the sync).',
        );
    }
    const mergedSecrets = secretsAfter(connector, source, this.openSecrets(source), config, secrets);
    await this.store.update(id, {
      name,
      lakeSchema: source.lakeSchema,
      config: Object.keys(config).length > 0 ? { ...source.config, ...config } : undefined,
      sealedSecrets: mergedSecrets ? this.box.seal(id, mergedSecrets) : undefined,
      secretsSet: mergedSecrets ? Object.keys(mergedSecrets).sort() : undefined,
      tables,
      paused: change.paused,
      schedule,
    });
    await this.auditChange(principal, id, config, secrets);
    return this.get(principal, id);
  }

  /** Where a source connects and as whom are audited when they change (by the names of what changed, never values). */
  private async auditChange(
    principal: Principal,
    id: string,
    config: Record<string, unknown>,
    secrets: Record<string, unknown>,
  ): Promise<void> {
    const changed = [...Object.keys(config), ...Object.keys(secrets)];
    const destination = changed.filter((field) => DESTINATION_FIELDS.has(field)).sort();
    const credentials = changed.filter((field) => !DESTINATION_FIELDS.has(field) && field in secrets).sort();
    const target = { type: 'source', id };
    if (destination.length > 0)
      await this.audit?.record(principal.organizationId, principal, 'source.destination_changed', target, {
        fields: destination,
      });
    if (credentials.length > 0)
      await this.audit?.record(principal.organizationId, principal, 'source.credentials_changed', target, {
        fields: credentials,
      });
  }

  /**
   * The schedule after a change: a new one (set by this principal), none, or on resuming a paused source the same
   * one started afresh from now, so a long pause does not end in a sync at once for the tick it missed.
   */
  private scheduleAfter(
    principal: Principal,
    source: SourceRecord,
    change: SourceChange,
  ): ScheduleSetting | null | undefined {
    if (change.schedule === null) return null;
    if (change.schedule !== undefined) return scheduleSetBy(principal, change.schedule, this.nowSeconds());
    if (change.paused === false && source.paused && source.schedule)
      return { ...source.schedule, nextSync: nextRunAfter(source.schedule.schedule, this.nowSeconds()) };
    return undefined;
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  /**
   * Soft delete: the source disappears from every route; the lake tables it filled stay. A source with a CDC slot
   * has it (and its publication) dropped first, so the source stops keeping WAL for lake; best effort: a source
   * that cannot be reached keeps them, and docs/api.md says how to drop them there.
   */
  async delete(principal: Principal, id: string): Promise<void> {
    const source = await this.find(principal, id);
    // As the caller may see it: a restricted credential is refused here as by get.
    await this.access.source(principal, source);
    if (source.cdcSlot) await this.dropSlot(source).catch(() => undefined);
    await this.store.softDelete(id);
    await this.audit?.record(principal.organizationId, principal, 'source.deleted', { type: 'source', id });
  }

  private async dropSlot(source: SourceRecord): Promise<void> {
    const settings = await this.reach(this.settings(source));
    if (!settings || !source.cdcSlot) return;
    const client = postgresClient(settings, 'check');
    client.on('error', () => {});
    try {
      await connectPostgres(client, settings);
      await dropCdc(client, source.cdcSlot.slot);
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** A live connection test where the connector has one; it also refreshes the table configuration from discovery. */
  async test(principal: Principal, id: string): Promise<TestOutcome> {
    const source = await this.find(principal, id);
    const connector = findConnector(source.connector) as Connector;
    const at = Math.floor(Date.now() / 1000);
    if (!connector.test) {
      const lastTest: LastTest = { supported: false, ok: false, reason: null, at };
      await this.store.update(id, { lastTest });
      return { supported: false, ok: false, reason: null, newTables: [] };
    }
    const reach = await this.reach(this.settings(source)).catch((error: unknown) => {
      if (error instanceof LakeServiceError) throw error;
      return undefined;
    });
    const tested = reach ? await connector.test(reach) : { ok: false, reason: 'unreachable' as const };
    const result = tested.tables ? { ...tested, tables: withPlausibleNames(tested.tables) } : tested;
    await this.store.update(id, {
      lastTest: { supported: true, ok: result.ok, reason: result.reason, at },
      ...(result.tables
        ? {
            tables: mergeDiscovery(source.connector, source.tables, result.tables, source.discovered === null),
            discovered: at,
          }
        : {}),
    });
    return {
      supported: true,
      ok: result.ok,
      reason: result.reason,
      // The first discovery enables every table; only later ones arrive off, and need saying.
      newTables: result.tables && source.discovered !== null ? newTableNames(source.tables, result.tables) : [],
    };
  }

  /**
   * Discovers the source's tables again before a sync and adds the new ones, off (nothing else changes: a table
   * gone from the source fails in the sync, where its error is seen). Best effort: a source that cannot be
   * discovered now is synced with the tables it has. The tables and what `record` writes of them (the source's
   * log) commit in one transaction, so a kill between the two never leaves a table added that nothing announced.
   * Returns the source as it is now, and the tables added.
   */
  async addNewTables(
    source: SourceRecord,
    record: (added: readonly string[]) => Promise<void>,
  ): Promise<{ source: SourceRecord; added: string[] }> {
    const connector = findConnector(source.connector);
    if (!connector?.discover || source.discovered === null) return { source, added: [] };
    // Discovery talks to the source: outside any transaction of lake's store.
    const reach = await this.reach(this.settings(source)).catch(() => undefined);
    const discovered = reach ? await connector.discover(reach).catch(() => undefined) : undefined;
    if (!discovered) return { source, added: [] };
    const found = withPlausibleNames(discovered);
    return this.db.transaction(lock.sourceSyncs(source.id), async () => {
      // Read again inside the transaction: what is merged is the configuration as it is now.
      const current = (await this.store.get(source.organizationId, source.id)) ?? source;
      const added = newTableNames(current.tables, found);
      if (added.length === 0) return { source: current, added };
      const at = Math.floor(Date.now() / 1000);
      const fresh = found.filter((t) => added.includes(`${t.schema}.${t.name}`));
      const tables = mergeDiscovery(current.connector, current.tables, [...current.tables, ...fresh], false);
      await this.store.update(current.id, { tables, discovered: at });
      await record(added);
      return { source: { ...current, tables, discovered: at }, added };
    });
  }

  /**
   * The settings with the address the outbound rules allow for their host (403 host_not_allowed when refused);
   * undefined when the host does not resolve (the connector would call it unreachable).
   */
  private async reach(settings: ConnectorSettings): Promise<ConnectorSettings | undefined> {
    try {
      return await this.checked(settings);
    } catch (error) {
      if (error instanceof LakeServiceError) throw error;
      return undefined;
    }
  }

  /** The settings to connect with, the host checked against the outbound rules (see reach); for syncs. */
  async connectSettings(source: SourceRecord): Promise<ConnectorSettings> {
    return this.checked(this.settings(source));
  }

  /** The settings with the host's checked address, never lake's own database (OutboundPolicy.resolveDatabase). */
  private async checked(given: ConnectorSettings): Promise<ConnectorSettings> {
    const settings = this.discovery ? { ...given, discovery: this.discovery } : given;
    const host = settings.secrets.host;
    if (!this.outbound || host === undefined) return settings;
    const connectHost = await this.outbound.resolveDatabase(
      host,
      Number(settings.config.port ?? 5432),
      String(settings.config.database),
    );
    return {
      ...settings,
      connectHost,
      ...(this.outbound.ownDatabase ? { ownDatabase: this.outbound.ownDatabase } : {}),
    };
  }

  /** What a connector needs to connect: configuration, opened credentials, table settings. */
  settings(source: SourceRecord): ConnectorSettings {
    return { config: source.config, secrets: this.openSecrets(source), tables: source.tables };
  }

  private openSecrets(source: SourceRecord): Record<string, string> {
    return source.sealedSecrets ? this.box.open(source.id, source.sealedSecrets) : {};
  }
}
