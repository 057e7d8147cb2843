import type { Principal } from '../auth/principal.js';
import { findConnector } from '../connectors/registry.js';
import type { Connector, ConnectorSettings, SourceTable } from '../connectors/types.js';
import { LakeServiceError } from '../errors.js';
import { newId } from '../ids.js';
import type { SecretBox } from './secret-box.js';
import { SourceStore, type LastTest, type SourceRecord } from './source-store.js';
import { acceptedConnector, applyTableChanges, checkName, checkSettings } from './validate.js';

const CREATE_FIELDS = ['connector', 'name', 'config'];
const PATCH_FIELDS = ['name', 'config', 'paused', 'tables'];

type Discovered = Omit<SourceTable, 'enabled' | 'mode' | 'cursorColumn'>;

/**
 * Keeps what people chose for tables they already had (enabled, mode, cursor, key), takes the columns discovery
 * found now, drops tables that are gone, and adds new ones: enabled when the source is new, off afterwards, so a
 * table appearing in a database is never synced without someone opting in.
 */
export function mergeDiscovery(current: readonly SourceTable[], found: readonly Discovered[], isNew: boolean): SourceTable[] {
  return found.map((table) => {
    const before = current.find((t) => t.schema === table.schema && t.name === table.name);
    if (!before) return { ...table, enabled: isNew, mode: 'full', cursorColumn: null };
    const names = new Set(table.columns.map((c) => c.name));
    const cursorKept = before.cursorColumn !== null && names.has(before.cursorColumn) ? before.cursorColumn : null;
    return {
      ...table,
      enabled: before.enabled,
      mode: cursorKept ? before.mode : 'full',
      cursorColumn: cursorKept,
      primaryKey: before.primaryKey.length > 0 && before.primaryKey.every((c) => names.has(c)) ? before.primaryKey : table.primaryKey,
    };
  });
}

export interface TestOutcome {
  supported: boolean;
  ok: boolean;
  reason: string | null;
}

/** Sources: where data comes from. Credentials are sealed on the way in and opened only to connect. */
export class SourceService {
  readonly store: SourceStore;

  constructor(
    db: import('../store/database.js').MetadataDb,
    private readonly box: SecretBox,
  ) {
    this.store = new SourceStore(db);
  }

  async create(principal: Principal, body: Record<string, unknown>): Promise<SourceRecord> {
    const connector = acceptedConnector(body.connector);
    const { config, secrets } = checkSettings(connector, body, false, CREATE_FIELDS);
    const name = checkName(body.name, `${connector.title} source`);
    const id = newId('src');
    // Discovery is best effort here: a source whose database is down still gets created, and a test discovers later.
    const found = await connector.discover?.({ config, secrets, tables: [] }).catch(() => undefined);
    return this.store.insert({
      id,
      organizationId: principal.organizationId,
      name,
      connector: connector.name,
      config,
      sealedSecrets: Object.keys(secrets).length > 0 ? this.box.seal(id, secrets) : null,
      secretsSet: Object.keys(secrets).sort(),
      tables: found ? mergeDiscovery([], found, true) : [],
      discovered: found ? Math.floor(Date.now() / 1000) : null,
    });
  }

  get(principal: Principal, id: string): SourceRecord {
    const source = this.store.get(principal.organizationId, id);
    if (!source) throw new LakeServiceError('source_not_found', `No source '${id.slice(0, 64)}' exists in your organization (deleted sources are not found either).`);
    return source;
  }

  list(principal: Principal, limit: number, startingAfter: string | undefined): { data: SourceRecord[]; hasMore: boolean } {
    let after: SourceRecord | undefined;
    if (startingAfter !== undefined) {
      after = this.store.get(principal.organizationId, startingAfter);
      if (!after) throw new LakeServiceError('invalid_cursor', 'starting_after is not a next_cursor from a previous page of your sources.', { param: 'starting_after' });
    }
    return this.store.list(principal.organizationId, limit, after);
  }

  /**
   * Changes name, configuration, credentials, table settings, or `paused`. While a sync runs, a pause cannot be
   * applied (409 source_pause_failed: cancel the sync first) and other changes would change the running sync's
   * ground (409 source_config_unavailable).
   */
  update(principal: Principal, id: string, body: Record<string, unknown>): SourceRecord {
    const source = this.get(principal, id);
    const connector = findConnector(source.connector) as Connector;
    const { config, secrets } = checkSettings(connector, body, true, PATCH_FIELDS);
    if (body.paused !== undefined && typeof body.paused !== 'boolean') {
      throw new LakeServiceError('invalid_source_parameters', 'paused must be true or false.', { param: 'paused' });
    }
    const name = body.name === undefined ? undefined : checkName(body.name, source.name);
    const tables = body.tables === undefined ? undefined : applyTableChanges(source.tables, body.tables);
    const changesConfig = name !== undefined || Object.keys(config).length > 0 || Object.keys(secrets).length > 0 || tables !== undefined;
    if (this.store.hasLiveSync(id)) {
      if (body.paused === true) {
        throw new LakeServiceError('source_pause_failed', 'A sync of this source is running, so the pause cannot be applied now. Cancel the sync (lake jobs cancel) or wait for it, then pause.');
      }
      if (changesConfig) throw new LakeServiceError('source_config_unavailable', 'A sync of this source is running; change it after the sync ends (or cancel the sync).');
    }
    const mergedSecrets = Object.keys(secrets).length > 0 ? { ...this.openSecrets(source), ...secrets } : undefined;
    this.store.update(id, {
      name,
      config: Object.keys(config).length > 0 ? { ...source.config, ...config } : undefined,
      sealedSecrets: mergedSecrets ? this.box.seal(id, mergedSecrets) : undefined,
      secretsSet: mergedSecrets ? Object.keys(mergedSecrets).sort() : undefined,
      tables,
      paused: body.paused as boolean | undefined,
    });
    return this.get(principal, id);
  }

  /** Soft delete: the source disappears from every route; the lake tables it filled stay. */
  delete(principal: Principal, id: string): void {
    this.get(principal, id);
    this.store.softDelete(id);
  }

  /** A live connection test where the connector has one; it also refreshes the table configuration from discovery. */
  async test(principal: Principal, id: string): Promise<TestOutcome> {
    const source = this.get(principal, id);
    const connector = findConnector(source.connector) as Connector;
    const at = Math.floor(Date.now() / 1000);
    if (!connector.test) {
      const lastTest: LastTest = { supported: false, ok: false, reason: null, at };
      this.store.update(id, { lastTest });
      return { supported: false, ok: false, reason: null };
    }
    const result = await connector.test(this.settings(source));
    this.store.update(id, {
      lastTest: { supported: true, ok: result.ok, reason: result.reason, at },
      ...(result.tables ? { tables: mergeDiscovery(source.tables, result.tables, source.discovered === null), discovered: at } : {}),
    });
    return { supported: true, ok: result.ok, reason: result.reason };
  }

  /** What a connector needs to connect: configuration, opened credentials, table settings. */
  settings(source: SourceRecord): ConnectorSettings {
    return { config: source.config, secrets: this.openSecrets(source), tables: source.tables };
  }

  private openSecrets(source: SourceRecord): Record<string, string> {
    return source.sealedSecrets ? this.box.open(source.id, source.sealedSecrets) : {};
  }
}
