import type { AuditAction } from '../../contract/service.js';
import type { MetadataDb } from '../store/metadata-db.js';

/** Who did it: a credential (and the person behind it), or the home's own administrator (`lake admin`). */
export interface AuditActor {
  kind: 'user' | 'service_key' | 'team_key' | 'local_admin' | 'operator' | 'anonymous';
  credentialId: string | null;
  userId: string | null;
  requestId: string | null;
  clientAddress: string | null;
}

export interface AuditEvent {
  id: string;
  /** Null for an event of the service itself (a burst of failed authentications from an address). */
  organizationId: string | null;
  created: number;
  actor: AuditActor;
  action: AuditAction;
  target: { type: string; id: string };
  /** What changed, never a secret: names, scopes, hosts, booleans. */
  details: Record<string, unknown>;
}

export interface AuditFilter {
  action?: AuditAction;
  /** A credential or user id. */
  actor?: string;
  since?: number;
  until?: number;
}

interface AuditRow {
  id: string;
  organization_id: string | null;
  created: number;
  actor_kind: AuditActor['kind'];
  actor_credential: string | null;
  actor_user: string | null;
  action: AuditAction;
  target_type: string;
  target_id: string;
  details: string;
  request_id: string | null;
  client_address: string | null;
}

/** The audit log's records: appended, read newest first; nothing here changes or removes one. */
export class AuditStore {
  constructor(private readonly db: MetadataDb) {}

  async append(event: AuditEvent): Promise<void> {
    await this.db.run(
      `INSERT INTO audit_events (id, organization_id, created, actor_kind, actor_credential, actor_user, action,
         target_type, target_id, details, request_id, client_address) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        event.id,
        event.organizationId,
        event.created,
        event.actor.kind,
        event.actor.credentialId,
        event.actor.userId,
        event.action,
        event.target.type,
        event.target.id,
        JSON.stringify(event.details),
        event.actor.requestId,
        event.actor.clientAddress,
      ],
    );
  }

  /** Where an event stands in the pages of one organization, or (undefined) of the whole service. */
  async position(organizationId: string | undefined, id: string): Promise<{ created: number; id: string } | undefined> {
    return this.db.get(
      'SELECT created, id FROM audit_events WHERE id = ? AND (CAST(? AS TEXT) IS NULL OR organization_id = ?)',
      [id, organizationId ?? null, organizationId ?? null],
    );
  }

  /** Newest first, after `after`: one organization's events, or (undefined) every event of the service. */
  async page(
    organizationId: string | undefined,
    filter: AuditFilter,
    limit: number,
    after: { created: number; id: string } | undefined,
  ): Promise<{ data: AuditEvent[]; hasMore: boolean }> {
    const rows = await this.db.all<AuditRow>(
      `SELECT * FROM audit_events WHERE (CAST(? AS TEXT) IS NULL OR organization_id = ?)
         AND (CAST(? AS TEXT) IS NULL OR action = ?)
         AND (CAST(? AS TEXT) IS NULL OR actor_credential = ? OR actor_user = ?)
         AND (CAST(? AS TEXT) IS NULL OR created >= ?) AND (CAST(? AS TEXT) IS NULL OR created < ?)
         AND (CAST(? AS TEXT) IS NULL OR created < ? OR (created = ? AND id < ?))
       ORDER BY created DESC, id DESC LIMIT ?`,
      [
        organizationId ?? null,
        organizationId ?? null,
        filter.action ?? null,
        filter.action ?? null,
        filter.actor ?? null,
        filter.actor ?? null,
        filter.actor ?? null,
        filter.since ?? null,
        filter.since ?? null,
        filter.until ?? null,
        filter.until ?? null,
        after?.id ?? null,
        after?.created ?? 0,
        after?.created ?? 0,
        after?.id ?? '',
        limit + 1,
      ],
    );
    return {
      data: rows.slice(0, limit).map((row) => ({
        id: row.id,
        organizationId: row.organization_id,
        created: Number(row.created),
        actor: {
          kind: row.actor_kind,
          credentialId: row.actor_credential,
          userId: row.actor_user,
          requestId: row.request_id,
          clientAddress: row.client_address,
        },
        action: row.action,
        target: { type: row.target_type, id: row.target_id },
        details: JSON.parse(row.details) as Record<string, unknown>,
      })),
      hasMore: rows.length > limit,
    };
  }
}
