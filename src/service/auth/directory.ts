import { newId } from '../core/ids.js';
import { withCount } from '../store/counted.js';
import { lock, type MetadataDb } from '../store/metadata-db.js';

export interface Organization {
  id: string;
  name: string;
  tablePermissions: boolean;
  created: number;
  /** When the service operator deactivated it: its credentials stop working, its data is kept. */
  deactivated: number | null;
}

export type UserRole = 'owner' | 'admin' | 'member';

export interface User {
  id: string;
  organizationId: string;
  name: string;
  email: string | null;
  role: UserRole;
  created: number;
  /** When an owner deactivated them: their tokens stop working, what they made stays. */
  deactivated: number | null;
}

interface OrganizationRow {
  id: string;
  name: string;
  table_permissions: number;
  created: number;
  deactivated: number | null;
}

interface UserRow {
  id: string;
  organization_id: string;
  name: string;
  email: string | null;
  role: UserRole;
  created: number;
  deactivated: number | null;
}

const toOrganization = (row: OrganizationRow): Organization => ({
  id: row.id,
  name: row.name,
  tablePermissions: Number(row.table_permissions) === 1,
  created: Number(row.created),
  deactivated: row.deactivated === null ? null : Number(row.deactivated),
});

const toUser = (row: UserRow): User => ({
  id: row.id,
  organizationId: row.organization_id,
  name: row.name,
  email: row.email,
  role: row.role,
  created: Number(row.created),
  deactivated: row.deactivated === null ? null : Number(row.deactivated),
});

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export interface UserChange {
  name?: string;
  email?: string | null;
  role?: UserRole;
}

/** Organizations and the people in them. */
export class Directory {
  constructor(private readonly db: MetadataDb) {}

  async createOrganization(name: string): Promise<Organization> {
    const row: OrganizationRow = {
      id: newId('org'),
      name,
      table_permissions: 0,
      created: nowSeconds(),
      deactivated: null,
    };
    await this.db.run('INSERT INTO organizations (id, name, table_permissions, created) VALUES (?, ?, ?, ?)', [
      row.id,
      row.name,
      row.table_permissions,
      row.created,
    ]);
    return toOrganization(row);
  }

  async createUser(organizationId: string, name: string, role: UserRole, email: string | null = null): Promise<User> {
    const row: UserRow = {
      id: newId('usr'),
      organization_id: organizationId,
      name,
      email,
      role,
      created: nowSeconds(),
      deactivated: null,
    };
    await this.db.run('INSERT INTO users (id, organization_id, name, email, role, created) VALUES (?, ?, ?, ?, ?, ?)', [
      row.id,
      row.organization_id,
      row.name,
      row.email,
      row.role,
      row.created,
    ]);
    return toUser(row);
  }

  async organization(id: string): Promise<Organization | undefined> {
    const row = await this.db.get<OrganizationRow>('SELECT * FROM organizations WHERE id = ?', [id]);
    return row && toOrganization(row);
  }

  /** One page of organizations, newest first (ids sort by creation time). */
  async organizationPage(
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: Organization[]; hasMore: boolean }> {
    const rows = await this.db.all<OrganizationRow>(
      'SELECT * FROM organizations WHERE (CAST(? AS TEXT) IS NULL OR id < ?) ORDER BY id DESC LIMIT ?',
      [startingAfter ?? null, startingAfter ?? null, limit + 1],
    );
    return { data: rows.slice(0, limit).map(toOrganization), hasMore: rows.length > limit };
  }

  async renameOrganization(id: string, name: string): Promise<void> {
    await this.db.run('UPDATE organizations SET name = ? WHERE id = ?', [name, id]);
  }

  /** Deactivates (or, with null, reactivates) an organization; nothing of it is deleted. */
  async setOrganizationDeactivated(id: string, deactivated: boolean): Promise<void> {
    await this.db.run('UPDATE organizations SET deactivated = ? WHERE id = ?', [deactivated ? nowSeconds() : null, id]);
  }

  async firstOrganization(): Promise<Organization | undefined> {
    const row = await this.db.get<OrganizationRow>('SELECT * FROM organizations ORDER BY created, id LIMIT 1');
    return row && toOrganization(row);
  }

  async user(id: string): Promise<User | undefined> {
    const row = await this.db.get<UserRow>('SELECT * FROM users WHERE id = ?', [id]);
    return row && toUser(row);
  }

  /** The organization's people, oldest first. */
  async users(organizationId: string): Promise<User[]> {
    return (
      await this.db.all<UserRow>('SELECT * FROM users WHERE organization_id = ? ORDER BY created, id', [organizationId])
    ).map(toUser);
  }

  /** One page of an organization's people, newest first. */
  async userPage(
    organizationId: string,
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: User[]; hasMore: boolean }> {
    const rows = await this.db.all<UserRow>(
      'SELECT * FROM users WHERE organization_id = ? AND (CAST(? AS TEXT) IS NULL OR id < ?) ORDER BY id DESC LIMIT ?',
      [organizationId, startingAfter ?? null, startingAfter ?? null, limit + 1],
    );
    return { data: rows.slice(0, limit).map(toUser), hasMore: rows.length > limit };
  }

  async updateUser(id: string, change: UserChange): Promise<void> {
    const user = await this.user(id);
    if (!user) return;
    await this.db.run('UPDATE users SET name = ?, email = ?, role = ? WHERE id = ?', [
      change.name ?? user.name,
      change.email === undefined ? user.email : change.email,
      change.role ?? user.role,
      id,
    ]);
  }

  async setUserDeactivated(id: string, deactivated: boolean): Promise<void> {
    await this.db.run('UPDATE users SET deactivated = ? WHERE id = ?', [deactivated ? nowSeconds() : null, id]);
  }

  /**
   * Runs fn with the number of the organization's active people, in one transaction under a lock of its own, so
   * what fn decides from the count (adding one) holds when two requests decide at once.
   */
  async withActiveUsers<T>(organizationId: string, fn: (active: number) => Promise<T>): Promise<T> {
    return withCount(
      this.db,
      lock.objectLimit(organizationId, 'users'),
      'SELECT COUNT(*) AS n FROM users WHERE organization_id = ? AND deactivated IS NULL',
      [organizationId],
      fn,
    );
  }

  /** Active owners: an organization must keep at least one. */
  async activeOwnerCount(organizationId: string): Promise<number> {
    const row = await this.db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM users WHERE organization_id = ? AND role = 'owner' AND deactivated IS NULL",
      [organizationId],
    );
    return Number(row?.n ?? 0);
  }

  async owner(organizationId: string): Promise<User | undefined> {
    const row = await this.db.get<UserRow>(
      "SELECT * FROM users WHERE organization_id = ? AND role = 'owner' ORDER BY deactivated IS NOT NULL, created, id LIMIT 1",
      [organizationId],
    );
    return row && toUser(row);
  }
}
