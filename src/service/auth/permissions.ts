import { LOCAL_ADMIN, type AuditLog } from './audit-log.js';
import type { AuditActor } from './audit-store.js';
import type { Directory } from './directory.js';
import type { Principal } from './principal.js';
import { LakeServiceError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { countRows } from '../store/counted.js';
import { lock, type MetadataDb } from '../store/metadata-db.js';
import { assertRoomFor, DEFAULT_OBJECT_LIMITS } from '../limits/object-limits.js';

export type GranteeKind = 'user' | 'role' | 'credential';

export interface Grant {
  id: string;
  organizationId: string;
  schema: string;
  /** A table or view name, or `*` for the whole schema. */
  table: string;
  granteeKind: GranteeKind;
  grantee: string;
  created: number;
}

/** What one principal may read in the lake. */
export interface TableAccess {
  /** True when the organization has table permissions on and this principal is not an owner. */
  restricted: boolean;
  canRead(schema: string, table: string): boolean;
}

export const UNRESTRICTED: TableAccess = { restricted: false, canRead: () => true };

interface GrantRow {
  id: string;
  organization_id: string;
  schema_name: string;
  table_name: string;
  grantee_kind: GranteeKind;
  grantee: string;
  created: number;
}

const toGrant = (row: GrantRow): Grant => ({
  id: row.id,
  organizationId: row.organization_id,
  schema: row.schema_name,
  table: row.table_name,
  granteeKind: row.grantee_kind,
  grantee: row.grantee,
  created: row.created,
});

/**
 * How long the switch read with a request's credential stands for that request's decisions: a moment, so a request
 * that waits (a long poll) or a stream reads it again.
 */
const SWITCH_READ_FRESH_MS = 1000;

/** Names compare as DuckDB compares identifiers: without regard to case. */
const fold = (name: string): string => name.toLowerCase();

/**
 * Table permissions of an organization: off by default; when on, a principal reads only what a grant to its user,
 * its user's role, or the credential itself allows. Owners are never restricted: they administer the grants.
 */
export class PermissionStore {
  constructor(
    private readonly db: MetadataDb,
    private readonly directory: Directory,
    /** Where changes of permissions and grants are recorded (the organization's audit log). */
    private readonly audit?: AuditLog,
    /** How many grants an organization keeps (LAKE_ORG_MAX_GRANTS). */
    private readonly maxGrants: number = DEFAULT_OBJECT_LIMITS.grants,
  ) {}

  async enabled(organizationId: string): Promise<boolean> {
    return (await this.directory.organization(organizationId))?.tablePermissions === true;
  }

  async setEnabled(organizationId: string, on: boolean, actor: AuditActor = LOCAL_ADMIN): Promise<void> {
    await this.db.run('UPDATE organizations SET table_permissions = ? WHERE id = ?', [on ? 1 : 0, organizationId]);
    await this.audit?.record(organizationId, actor, on ? 'permissions.enabled' : 'permissions.disabled', {
      type: 'organization',
      id: organizationId,
    });
  }

  async grant(
    organizationId: string,
    schema: string,
    table: string,
    granteeKind: GranteeKind,
    grantee: string,
    actor: AuditActor = LOCAL_ADMIN,
  ): Promise<Grant> {
    const find = (): Promise<GrantRow | undefined> =>
      this.db.get<GrantRow>(
        'SELECT * FROM table_grants WHERE organization_id = ? AND schema_name = ? AND table_name = ? AND grantee_kind = ? AND grantee = ?',
        [organizationId, schema, table, granteeKind, grantee],
      );
    // A grant already held is answered as it is; a new one is counted with its insert, so two requests cannot both
    // take the organization's last place.
    const row = await this.db.transaction(lock.objectLimit(organizationId, 'grants'), async () => {
      const held = await find();
      if (held) return held;
      const kept = await countRows(this.db, 'SELECT COUNT(*) AS n FROM table_grants WHERE organization_id = ?', [
        organizationId,
      ]);
      assertRoomFor('grants', kept, this.maxGrants);
      await this.db.run(
        `INSERT INTO table_grants (id, organization_id, schema_name, table_name, grantee_kind, grantee, created) VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (organization_id, schema_name, table_name, grantee_kind, grantee) DO NOTHING`,
        [newId('grt'), organizationId, schema, table, granteeKind, grantee, Math.floor(Date.now() / 1000)],
      );
      return find();
    });
    const grant = toGrant(row as GrantRow);
    await this.audit?.record(
      organizationId,
      actor,
      'grant.created',
      { type: 'grant', id: grant.id },
      { schema, table, grantee_kind: granteeKind, grantee },
    );
    return grant;
  }

  /** True when a grant was removed. */
  async revoke(
    organizationId: string,
    schema: string,
    table: string,
    granteeKind: GranteeKind,
    grantee: string,
    actor: AuditActor = LOCAL_ADMIN,
  ): Promise<boolean> {
    const result = await this.db.run(
      'DELETE FROM table_grants WHERE organization_id = ? AND schema_name = ? AND table_name = ? AND grantee_kind = ? AND grantee = ?',
      [organizationId, schema, table, granteeKind, grantee],
    );
    if (result.changes > 0)
      await this.audit?.record(
        organizationId,
        actor,
        'grant.revoked',
        { type: 'grant', id: `${schema}.${table}` },
        { schema, table, grantee_kind: granteeKind, grantee },
      );
    return result.changes > 0;
  }

  async list(organizationId: string): Promise<Grant[]> {
    return (
      await this.db.all<GrantRow>(
        'SELECT * FROM table_grants WHERE organization_id = ? ORDER BY schema_name, table_name, grantee_kind, grantee',
        [organizationId],
      )
    ).map(toGrant);
  }

  /**
   * The switch as the principal's request read it with the credential, if that was a moment ago (a stream's
   * principal lives longer: it reads the switch again), else from the store.
   */
  private async enabledFor(principal: Principal): Promise<boolean> {
    const read = principal.tablePermissions;
    if (read && Date.now() - read.readAtMs < SWITCH_READ_FRESH_MS) return read.enabled;
    return this.enabled(principal.organizationId);
  }

  async accessFor(principal: Principal): Promise<TableAccess> {
    // A team API key reads every table on every canvas of its team, as the spec grants it.
    if (principal.kind === 'team_key' || !(await this.enabledFor(principal))) return UNRESTRICTED;
    const user = principal.userId ? await this.directory.user(principal.userId) : undefined;
    if (user?.role === 'owner') return UNRESTRICTED;
    const grants = (
      await this.db.all<GrantRow>(
        `SELECT * FROM table_grants WHERE organization_id = ? AND (
             (grantee_kind = 'user' AND grantee = ?) OR (grantee_kind = 'role' AND grantee = ?) OR (grantee_kind = 'credential' AND grantee = ?))`,
        [principal.organizationId, user?.id ?? '', user?.role ?? '', principal.credentialId],
      )
    ).map(toGrant);
    const wholeSchemas = new Set(grants.filter((g) => g.table === '*').map((g) => fold(g.schema)));
    const tables = new Set(grants.filter((g) => g.table !== '*').map((g) => `${fold(g.schema)}\u0000${fold(g.table)}`));
    return {
      restricted: true,
      canRead: (schema, table) => wholeSchemas.has(fold(schema)) || tables.has(`${fold(schema)}\u0000${fold(table)}`),
    };
  }

  /** Service keys query and read the catalog only where table permissions are on, so their reach is explicit. */
  async assertServiceKeyAllowed(principal: Principal): Promise<void> {
    if (principal.kind === 'service_key' && !(await this.enabledFor(principal))) {
      throw new LakeServiceError(
        'service_key_permissions_off',
        'Service keys can query and read the catalog only in organizations that have turned table permissions on. Ask an owner to turn them on and grant this key its tables.',
      );
    }
  }
}
