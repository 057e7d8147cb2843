import { newId } from '../ids.js';
import type { MetadataDb } from '../store/database.js';

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

  createOrganization(name: string): Organization {
    const row: OrganizationRow = { id: newId('org'), name, table_permissions: 0, created: Math.floor(Date.now() / 1000) };
    this.db.prepare('INSERT INTO organizations (id, name, table_permissions, created) VALUES (@id, @name, @table_permissions, @created)').run(row);
    return toOrganization(row);
  }

  createUser(organizationId: string, name: string, role: UserRole, email: string | null = null): User {
    const row: UserRow = {
      id: newId('usr'),
      organization_id: organizationId,
      name,
      email,
      role,
      created: Math.floor(Date.now() / 1000),
    };
    this.db
      .prepare('INSERT INTO users (id, organization_id, name, email, role, created) VALUES (@id, @organization_id, @name, @email, @role, @created)')
      .run(row);
    return toUser(row);
  }

  organization(id: string): Organization | undefined {
    const row = this.db.prepare('SELECT * FROM organizations WHERE id = ?').get(id) as OrganizationRow | undefined;
    return row && toOrganization(row);
  }

  firstOrganization(): Organization | undefined {
    const row = this.db.prepare('SELECT * FROM organizations ORDER BY created, id LIMIT 1').get() as OrganizationRow | undefined;
    return row && toOrganization(row);
  }

  user(id: string): User | undefined {
    const row = this.db.prepare('SELECT * FROM users WHERE id = ?').get(id) as UserRow | undefined;
    return row && toUser(row);
  }

  /** The organization's people, oldest first. */
  users(organizationId: string): User[] {
    return (this.db.prepare('SELECT * FROM users WHERE organization_id = ? ORDER BY created, id').all(organizationId) as UserRow[]).map(toUser);
  }

  owner(organizationId: string): User | undefined {
    const row = this.db
      .prepare("SELECT * FROM users WHERE organization_id = ? AND role = 'owner' ORDER BY created, id LIMIT 1")
      .get(organizationId) as UserRow | undefined;
    return row && toUser(row);
  }
}
