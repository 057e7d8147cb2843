import { LakeServiceError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { withCount } from '../store/counted.js';
import { lock, type MetadataDb } from '../store/metadata-db.js';
import type { CredentialKind, Principal } from './principal.js';
import type { Scope } from './scopes.js';
import { hashSecret, looksLikeSecret, newSecret, secretHint, type SecretPrefix } from './secrets.js';

export interface CredentialRecord {
  id: string;
  kind: CredentialKind;
  organizationId: string;
  userId: string | null;
  name: string;
  secretHint: string;
  scopes: Scope[];
  created: number;
  expires: number | null;
  lastUsed: number | null;
  revoked: number | null;
}

export interface IssuedCredential {
  record: CredentialRecord;
  /** The plaintext secret: returned once, here, and never stored. */
  secret: string;
}

interface CredentialRow {
  id: string;
  kind: CredentialKind;
  organization_id: string;
  user_id: string | null;
  name: string;
  secret_hint: string;
  scopes: string;
  created: number;
  expires: number | null;
  last_used: number | null;
  revoked: number | null;
}

/** A credential with whether its organization and its person are still active (one read, on every request). */
interface AuthenticatingRow extends CredentialRow {
  organization_deactivated: number | null;
  organization_table_permissions: number;
  user_deactivated: number | null;
}

// The credential with its organization's and person's deactivation, so a deactivated one stops at once on every
// replica without a second round trip, and the organization's table-permissions switch, which the request's
// access is decided by.
const AUTHENTICATING_SELECT = `SELECT c.*, o.deactivated AS organization_deactivated, o.table_permissions AS organization_table_permissions,
  u.deactivated AS user_deactivated
  FROM credentials c JOIN organizations o ON o.id = c.organization_id LEFT JOIN users u ON u.id = c.user_id`;

const PREFIX_OF: Record<CredentialKind, { secret: SecretPrefix; id: string }> = {
  pat: { secret: 'pat', id: 'tok' },
  service_key: { secret: 'nsk', id: 'key' },
  team_key: { secret: 'tak', id: 'tkey' },
};

// Writing last_used on every request would turn each read into a write; a minute's precision is what people need.
export const LAST_USED_PRECISION_SECONDS = 60;

function toRecord(row: CredentialRow): CredentialRecord {
  return {
    id: row.id,
    kind: row.kind,
    organizationId: row.organization_id,
    userId: row.user_id,
    name: row.name,
    secretHint: row.secret_hint,
    scopes: JSON.parse(row.scopes) as Scope[],
    created: row.created,
    expires: row.expires,
    lastUsed: row.last_used,
    revoked: row.revoked,
  };
}

export interface IssueCredentialInput {
  kind: CredentialKind;
  organizationId: string;
  userId: string | null;
  name: string;
  scopes: readonly Scope[];
  expires?: number | null;
}

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export class CredentialStore {
  constructor(private readonly db: MetadataDb) {}

  /**
   * Runs fn with the number of active (neither revoked nor expired) credentials a person holds (their tokens) or an
   * organization holds (its service and team keys), in one transaction under a lock of their own, so what fn
   * decides from the count (issuing one more) holds when two requests decide at once.
   */
  async withActive<T>(
    holder: { userId: string } | { organizationId: string },
    fn: (active: number) => Promise<T>,
  ): Promise<T> {
    const [owner, where] =
      'userId' in holder
        ? [holder.userId, "user_id = ? AND kind = 'pat'"]
        : [holder.organizationId, "organization_id = ? AND kind IN ('service_key', 'team_key')"];
    return withCount(
      this.db,
      lock.objectLimit(owner, 'userId' in holder ? 'tokens' : 'keys'),
      `SELECT COUNT(*) AS n FROM credentials WHERE ${where} AND revoked IS NULL AND (expires IS NULL OR expires > ?)`,
      [owner, nowSeconds()],
      fn,
    );
  }

  async issue(input: IssueCredentialInput): Promise<IssuedCredential> {
    if (input.kind === 'pat' && input.userId === null) throw new Error('A personal access token belongs to a user.');
    const prefixes = PREFIX_OF[input.kind];
    const secret = newSecret(prefixes.secret);
    const row: CredentialRow = {
      id: newId(prefixes.id),
      kind: input.kind,
      organization_id: input.organizationId,
      user_id: input.kind === 'pat' ? input.userId : null,
      name: input.name,
      secret_hint: secretHint(secret),
      scopes: JSON.stringify([...input.scopes]),
      created: nowSeconds(),
      expires: input.expires ?? null,
      last_used: null,
      revoked: null,
    };
    await this.db.run(
      `INSERT INTO credentials (id, kind, organization_id, user_id, name, secret_hash, secret_hint, scopes, created, expires)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        row.id,
        row.kind,
        row.organization_id,
        row.user_id,
        row.name,
        hashSecret(secret),
        row.secret_hint,
        row.scopes,
        row.created,
        row.expires,
      ],
    );
    return { record: toRecord(row), secret };
  }

  async get(id: string): Promise<CredentialRecord | undefined> {
    const row = await this.db.get<CredentialRow>('SELECT * FROM credentials WHERE id = ?', [id]);
    return row && toRecord(row);
  }

  /**
   * One page of credentials, newest id first, after `startingAfter`: a person's tokens, or an organization's keys of
   * one kind.
   */
  async page(
    owner: { userId: string; kind: 'pat' } | { organizationId: string; kind: 'service_key' | 'team_key' },
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: CredentialRecord[]; hasMore: boolean }> {
    const [column, value] = 'userId' in owner ? ['user_id', owner.userId] : ['organization_id', owner.organizationId];
    const rows = await this.db.all<CredentialRow>(
      `SELECT * FROM credentials WHERE ${column} = ? AND kind = ? AND (CAST(? AS TEXT) IS NULL OR id < ?) ORDER BY id DESC LIMIT ?`,
      [value, owner.kind, startingAfter ?? null, startingAfter ?? null, limit + 1],
    );
    return { data: rows.slice(0, limit).map(toRecord), hasMore: rows.length > limit };
  }

  /**
   * A credential by id with what else decides whether it may act: its organization's or person's deactivation
   * (one read, as authentication makes).
   */
  async standing(
    id: string,
  ): Promise<{ record: CredentialRecord; deactivated: 'organization' | 'user' | null } | undefined> {
    const row = await this.db.get<AuthenticatingRow>(`${AUTHENTICATING_SELECT} WHERE c.id = ?`, [id]);
    if (!row) return undefined;
    const deactivated =
      row.organization_deactivated !== null ? 'organization' : row.user_deactivated !== null ? 'user' : null;
    return { record: toRecord(row), deactivated };
  }

  /** Revokes a live credential; false when it was revoked already (nothing changed, so nothing to record). */
  async revoke(id: string): Promise<boolean> {
    const { changes } = await this.db.run('UPDATE credentials SET revoked = ? WHERE id = ? AND revoked IS NULL', [
      nowSeconds(),
      id,
    ]);
    return changes > 0;
  }

  /**
   * The credential with this id whose secret this is, when it is live (not revoked, not expired); undefined
   * otherwise. Its organization's or person's deactivation is a refusal of its own, not a reason to replace it.
   */
  async liveRecord(id: string, secret: string): Promise<CredentialRecord | undefined> {
    const row = await this.db.get<CredentialRow>('SELECT * FROM credentials WHERE id = ? AND secret_hash = ?', [
      id,
      hashSecret(secret),
    ]);
    if (!row || row.revoked !== null) return undefined;
    return row.expires === null || row.expires > nowSeconds() ? toRecord(row) : undefined;
  }

  /**
   * The principal of a credential named by id, from a token lake signed for it (a stream URL): the credential must
   * still be live, as a bearer secret must.
   */
  async principalById(id: string): Promise<Principal> {
    const row = await this.db.get<AuthenticatingRow>(`${AUTHENTICATING_SELECT} WHERE c.id = ?`, [id]);
    if (!row)
      throw new LakeServiceError(
        'invalid_credentials',
        'The stream URL was made for a credential that no longer exists.',
      );
    return authenticated(row, toRecord(await this.live(row)));
  }

  /**
   * A credential row that may be used now: not revoked, not expired, its organization and person active (its last
   * use noted, coarsely).
   */
  private async live(row: AuthenticatingRow): Promise<CredentialRow> {
    const now = nowSeconds();
    if (row.organization_deactivated !== null) {
      throw new LakeServiceError(
        'organization_deactivated',
        'This organization was deactivated by the service operator; its credentials no longer work (its data is kept). Ask the operator.',
      );
    }
    if (row.user_deactivated !== null) {
      throw new LakeServiceError(
        'user_deactivated',
        'The person this token belongs to was deactivated by an owner of the organization. Ask an owner.',
      );
    }
    if (row.revoked !== null) {
      throw new LakeServiceError('credentials_revoked', 'This token was revoked. Create a new one.');
    }
    if (row.expires !== null && row.expires <= now) {
      throw new LakeServiceError('credentials_expired', 'This token has expired. Create a new one.');
    }
    if (row.last_used === null || now - row.last_used >= LAST_USED_PRECISION_SECONDS) {
      await this.db.run('UPDATE credentials SET last_used = ? WHERE id = ?', [now, row.id]);
    }
    return row;
  }

  /**
   * Resolves a bearer secret to the principal it stands for. Unknown, malformed, revoked and expired secrets all
   * fail here, before any route runs; the secret itself never appears in the error.
   */
  async authenticate(secret: string, accepted: readonly SecretPrefix[]): Promise<Principal> {
    if (!looksLikeSecret(secret, accepted)) {
      const prefixes = accepted.map((p) => `${p}_`).join(' or ');
      // Said precisely: a token with the right prefix but the wrong length or characters was told to start with
      // the prefix it had.
      const right = accepted.some((p) => secret.startsWith(`${p}_`));
      throw new LakeServiceError(
        'invalid_credentials',
        right
          ? `The credential is not valid: a token is ${prefixes} followed by 40 letters and digits, and this one is not (cut short, or with extra characters?).`
          : `The credential is not valid. Expected a token that starts with ${prefixes}.`,
      );
    }
    const row = await this.db.get<AuthenticatingRow>(`${AUTHENTICATING_SELECT} WHERE c.secret_hash = ?`, [
      hashSecret(secret),
    ]);
    if (!row || !accepted.includes(PREFIX_OF[row.kind].secret)) {
      throw new LakeServiceError('invalid_credentials', 'The credential is not valid: no such token exists.');
    }
    return authenticated(row, toRecord(await this.live(row)));
  }
}

/** The principal of a credential just read, with its organization's table-permissions switch as read with it. */
function authenticated(row: AuthenticatingRow, record: CredentialRecord): Principal {
  return {
    ...principalOf(record),
    tablePermissions: { enabled: Number(row.organization_table_permissions) === 1, readAtMs: Date.now() },
  };
}

/** The principal a credential stands for. */
export function principalOf(record: CredentialRecord): Principal {
  return {
    kind: record.kind === 'pat' ? 'user' : record.kind,
    organizationId: record.organizationId,
    userId: record.userId,
    credentialId: record.id,
    credentialKind: record.kind,
    scopes: record.scopes,
  };
}
