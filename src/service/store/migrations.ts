import type { Migration } from './migrate.js';

// Append only: a released migration is never edited, because homes in the field have already applied it.
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'organizations, users, credentials',
    sql: `
      CREATE TABLE organizations (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        table_permissions INTEGER NOT NULL DEFAULT 0,
        created INTEGER NOT NULL
      );
      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations(id),
        name TEXT NOT NULL,
        email TEXT,
        role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
        created INTEGER NOT NULL
      );
      CREATE TABLE credentials (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('pat', 'service_key', 'team_key')),
        organization_id TEXT NOT NULL REFERENCES organizations(id),
        user_id TEXT REFERENCES users(id),
        name TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        secret_hint TEXT NOT NULL,
        scopes TEXT NOT NULL,
        created INTEGER NOT NULL,
        expires INTEGER,
        last_used INTEGER,
        revoked INTEGER
      );
      CREATE INDEX credentials_by_org ON credentials (organization_id, kind, created);
      CREATE TABLE home_settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
];
