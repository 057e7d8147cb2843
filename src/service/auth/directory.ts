import { newId } from '../core/ids.js';
import type { MetadataDb } from '../store/metadata-db.js';

export interface Organization {
  id: string;
  name: string;
  tablePermissions: boolean;
  created: number;
}

export type UserRole = 'owner' | 'admin' | 'member';

export interface User {
  id: string;
  organizationId: string;
  name: string;
  email: string | null;
  role: UserRole;
  created: number;
}

interface OrganizationRow {
  id: string;
  name: string;
  table_permissions: number;
  created: number;
}

interface UserRow {
  id: string;
  organization_id: string;
  name: string;
  email: string | null;
  role: UserRole;
  created: number;
}

const toOrganization = (row: OrganizationRow): Organization => ({
  id: row.id,
  name: row.name,
  tablePermissions: row.table_permissions === 1,
  created: row.created,
});

const toUser = (row: UserRow): User => ({
  id: row.id,
  organizationId: row.organization_id,
  name: row.name,
  email: row.email,
  role: row.role,
  created: row.created,
});

/** Organizations and the people in them. */
export class Directory {
  constructor(private readonly db: MetadataDb) {}

  async createOrganization(name: string): Promise<Organization> {
    const row: OrganizationRow = {
      id: newId('org'),
      name,
      table_permissions: 0,
      created: Math.floor(Date.now() / 1000),
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
      created: Math.floor(Date.now() / 1000),
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

  async owner(organizationId: string): Promise<User | undefined> {
    const row = await this.db.get<UserRow>(
      "SELECT * FROM users WHERE organization_id = ? AND role = 'owner' ORDER BY created, id LIMIT 1",
      [organizationId],
    );
    return row && toUser(row);
  }
}
