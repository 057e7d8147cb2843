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
  {
    version: 2,
    name: 'lake tables, jobs, queries, idempotency keys',
    sql: `
      CREATE TABLE lake_tables (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations(id),
        schema_name TEXT NOT NULL,
        table_name TEXT NOT NULL,
        current_snapshot_id TEXT,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        UNIQUE (organization_id, schema_name, table_name)
      );
      CREATE TABLE lake_snapshots (
        id TEXT PRIMARY KEY,
        table_id TEXT NOT NULL REFERENCES lake_tables(id),
        directory TEXT NOT NULL,
        files TEXT NOT NULL,
        row_count INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        columns TEXT NOT NULL,
        created INTEGER NOT NULL
      );
      CREATE TABLE lake_catalog_versions (
        organization_id TEXT PRIMARY KEY REFERENCES organizations(id),
        version INTEGER NOT NULL
      );
      CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations(id),
        kind TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
        principal_id TEXT NOT NULL,
        credential_id TEXT NOT NULL,
        created INTEGER NOT NULL,
        started INTEGER,
        finished INTEGER,
        error_code TEXT,
        error_message TEXT,
        lease_owner TEXT,
        lease_expires INTEGER
      );
      CREATE INDEX jobs_by_org ON jobs (organization_id, id);
      CREATE INDEX jobs_live ON jobs (organization_id, kind, status);
      CREATE TABLE queries (
        id TEXT PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
        sql TEXT NOT NULL,
        duration_ms INTEGER,
        row_count INTEGER,
        result_file TEXT,
        result_bytes INTEGER,
        columns TEXT
      );
      CREATE TABLE idempotency_keys (
        organization_id TEXT NOT NULL,
        principal_id TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        resource_id TEXT NOT NULL,
        response TEXT NOT NULL,
        created INTEGER NOT NULL,
        PRIMARY KEY (organization_id, principal_id, endpoint, idempotency_key)
      );
      CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created);
    `,
  },
  {
    version: 3,
    name: 'table grants and logical views',
    sql: `
      CREATE TABLE table_grants (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations(id),
        schema_name TEXT NOT NULL,
        table_name TEXT NOT NULL,
        grantee_kind TEXT NOT NULL CHECK (grantee_kind IN ('user', 'role', 'credential')),
        grantee TEXT NOT NULL,
        created INTEGER NOT NULL,
        UNIQUE (organization_id, schema_name, table_name, grantee_kind, grantee)
      );
      CREATE TABLE lake_views (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations(id),
        schema_name TEXT NOT NULL,
        view_name TEXT NOT NULL,
        sql TEXT NOT NULL,
        table_refs TEXT NOT NULL,
        columns TEXT NOT NULL,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        UNIQUE (organization_id, schema_name, view_name)
      );
    `,
  },
  {
    version: 4,
    name: 'job events and cancellation',
    sql: `
      ALTER TABLE jobs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX jobs_by_org_created ON jobs (organization_id, created, id);
      CREATE INDEX jobs_by_lease ON jobs (status, lease_expires);
      CREATE TABLE job_events (
        job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        created INTEGER NOT NULL,
        PRIMARY KEY (job_id, seq)
      );
    `,
  },
  {
    version: 5,
    name: 'sources',
    sql: `
      CREATE TABLE sources (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations(id),
        name TEXT NOT NULL,
        connector TEXT NOT NULL,
        config TEXT NOT NULL,
        secrets TEXT,
        secrets_set TEXT NOT NULL,
        tables TEXT NOT NULL,
        discovered INTEGER,
        last_test TEXT,
        paused INTEGER NOT NULL DEFAULT 0,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        deleted INTEGER
      );
      CREATE INDEX sources_by_org ON sources (organization_id, deleted, created);
      CREATE TABLE syncs (
        id TEXT PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
        source_id TEXT NOT NULL REFERENCES sources(id),
        created INTEGER NOT NULL
      );
      CREATE INDEX syncs_by_source ON syncs (source_id, created);
    `,
  },
  {
    version: 6,
    name: 'syncs, table state and source logs',
    sql: `
      ALTER TABLE syncs ADD COLUMN request TEXT NOT NULL DEFAULT '{}';
      ALTER TABLE syncs ADD COLUMN progress TEXT NOT NULL DEFAULT '{}';
      ALTER TABLE sources ADD COLUMN destination_schema TEXT;
      CREATE TABLE source_table_state (
        source_id TEXT NOT NULL REFERENCES sources(id),
        schema_name TEXT NOT NULL,
        table_name TEXT NOT NULL,
        cursor_value TEXT,
        columns TEXT NOT NULL,
        lake_schema TEXT NOT NULL,
        lake_table TEXT NOT NULL,
        last_synced INTEGER NOT NULL,
        PRIMARY KEY (source_id, schema_name, table_name)
      );
      CREATE TABLE source_logs (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations(id),
        source_id TEXT NOT NULL REFERENCES sources(id),
        kind TEXT NOT NULL CHECK (kind IN ('error', 'schema_change')),
        table_name TEXT,
        message TEXT NOT NULL,
        details TEXT NOT NULL,
        created INTEGER NOT NULL
      );
      CREATE INDEX source_logs_by_source ON source_logs (organization_id, source_id, created);
    `,
  },
  {
    version: 7,
    name: 'canvases',
    sql: `
      CREATE TABLE canvases (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations(id),
        name TEXT NOT NULL,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL
      );
      CREATE INDEX canvases_by_org ON canvases (organization_id, created);
      CREATE TABLE canvas_elements (
        id TEXT PRIMARY KEY,
        canvas_id TEXT NOT NULL REFERENCES canvases(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('query', 'table')),
        sql TEXT,
        table_ref TEXT,
        created INTEGER NOT NULL
      );
      CREATE INDEX canvas_elements_by_canvas ON canvas_elements (canvas_id, created);
    `,
  },
  {
    version: 8,
    name: 'usage',
    sql: `
      CREATE TABLE usage_daily (
        organization_id TEXT NOT NULL REFERENCES organizations(id),
        day TEXT NOT NULL,
        metric TEXT NOT NULL,
        quantity INTEGER NOT NULL,
        PRIMARY KEY (organization_id, day, metric)
      );
    `,
  },
  {
    version: 9,
    name: 'sends',
    sql: `
      CREATE TABLE sends (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations(id),
        name TEXT NOT NULL,
        sql TEXT NOT NULL,
        destination TEXT NOT NULL,
        secrets TEXT NOT NULL,
        secrets_set TEXT NOT NULL,
        every_minutes INTEGER,
        paused INTEGER NOT NULL DEFAULT 0,
        credential_id TEXT NOT NULL,
        principal_id TEXT NOT NULL,
        next_run INTEGER,
        created INTEGER NOT NULL,
        updated INTEGER NOT NULL
      );
      CREATE INDEX sends_by_org ON sends (organization_id, created);
      CREATE TABLE send_runs (
        id TEXT PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,
        send_id TEXT NOT NULL REFERENCES sends(id) ON DELETE CASCADE,
        trigger TEXT NOT NULL CHECK (trigger IN ('manual', 'schedule')),
        query_id TEXT,
        rows_sent INTEGER NOT NULL DEFAULT 0,
        batches INTEGER NOT NULL DEFAULT 0,
        created INTEGER NOT NULL
      );
      CREATE INDEX send_runs_by_send ON send_runs (send_id, created);
    `,
  },
  {
    version: 10,
    name: 'snapshot lifecycle',
    // When a snapshot stopped being current (and at which catalog version), and which catalog version each query
    // reads: together they say when an old snapshot can no longer be read by anyone (docs/decisions.md, 35).
    sql: `
      ALTER TABLE lake_snapshots ADD COLUMN superseded_at INTEGER;
      ALTER TABLE lake_snapshots ADD COLUMN superseded_version INTEGER;
      ALTER TABLE queries ADD COLUMN catalog_version INTEGER;
      UPDATE lake_snapshots
        SET superseded_at = CAST(strftime('%s', 'now') AS INTEGER),
            superseded_version = coalesce((SELECT v.version FROM lake_catalog_versions v JOIN lake_tables t ON t.organization_id = v.organization_id
                                           WHERE t.id = lake_snapshots.table_id), 0)
        WHERE id NOT IN (SELECT current_snapshot_id FROM lake_tables WHERE current_snapshot_id IS NOT NULL);
      CREATE INDEX lake_snapshots_superseded ON lake_snapshots (superseded_at) WHERE superseded_at IS NOT NULL;
    `,
    // A new PostgreSQL store has no snapshots to mark: the same migration without SQLite's strftime.
    postgres: `
      ALTER TABLE lake_snapshots ADD COLUMN superseded_at INTEGER;
      ALTER TABLE lake_snapshots ADD COLUMN superseded_version INTEGER;
      ALTER TABLE queries ADD COLUMN catalog_version INTEGER;
      CREATE INDEX lake_snapshots_superseded ON lake_snapshots (superseded_at) WHERE superseded_at IS NOT NULL;
    `,
  },
  {
    version: 11,
    name: 'layered snapshots',
    // An incremental sync adds a layer of changed rows instead of rewriting the table (docs/decisions.md, 36).
    sql: `
      ALTER TABLE lake_snapshots ADD COLUMN layers TEXT;
      ALTER TABLE lake_snapshots ADD COLUMN merge_key TEXT;
    `,
  },
  {
    version: 12,
    name: 'canvas creators',
    // Only a canvas's creator (or an owner) adds to it; canvases made before this have none: owners only.
    sql: `ALTER TABLE canvases ADD COLUMN created_by TEXT;`,
  },
  {
    version: 13,
    name: 'shared rate limits',
    // Each key's theoretical arrival time (epoch ms), for replicas that share one budget (docs/decisions.md, 43).
    sql: `
      CREATE TABLE rate_limit_cells (
        key TEXT PRIMARY KEY,
        tat INTEGER NOT NULL
      );
      CREATE INDEX rate_limit_cells_by_tat ON rate_limit_cells (tat);
    `,
  },
  {
    version: 14,
    name: 'canvas element order',
    // Elements were ordered by SQLite's rowid, which PostgreSQL has not: their order is a column of its own.
    sql: `
      ALTER TABLE canvas_elements ADD COLUMN position INTEGER;
      UPDATE canvas_elements SET position = rowid;
    `,
    postgres: `ALTER TABLE canvas_elements ADD COLUMN position INTEGER;`,
  },
  {
    version: 15,
    name: 'query plans',
    // What a queued query reads (its catalog file and folders), so any replica with a free worker can run it
    // (docs/decisions.md, 43).
    sql: `ALTER TABLE queries ADD COLUMN plan TEXT;`,
  },
  {
    version: 16,
    name: 'result storage per organization',
    // Summing every kept result on each query grew with the day's queries; the total is kept as results are
    // recorded and purged instead.
    sql: `
      CREATE TABLE result_storage (
        organization_id TEXT PRIMARY KEY,
        bytes INTEGER NOT NULL
      );
      INSERT INTO result_storage (organization_id, bytes)
        SELECT j.organization_id, sum(q.result_bytes) FROM queries q JOIN jobs j ON j.id = q.id
         WHERE j.kind = 'query' AND j.status = 'succeeded' AND q.result_bytes IS NOT NULL
         GROUP BY j.organization_id;
    `,
  },
  {
    version: 17,
    name: 'source schedules',
    // A source's schedule (JSON), its next due time (epoch seconds, claimed by compare-and-set across replicas) and
    // who set it: a scheduled sync is that principal's job.
    sql: `
      ALTER TABLE sources ADD COLUMN schedule TEXT;
      ALTER TABLE sources ADD COLUMN next_sync INTEGER;
      ALTER TABLE sources ADD COLUMN schedule_principal_id TEXT;
      ALTER TABLE sources ADD COLUMN schedule_credential_id TEXT;
      CREATE INDEX sources_by_next_sync ON sources (next_sync);
    `,
  },
  {
    version: 18,
    name: 'table state deletes',
    // Whether a table was last written with soft deletes (its _deleted_at column): a change reads it whole.
    sql: `ALTER TABLE source_table_state ADD COLUMN soft_deletes INTEGER;`,
  },
  {
    version: 19,
    name: 'source replication slots',
    // What the last sync saw of the source's CDC slot (JSON): its position, the WAL it keeps, a warning; and a log
    // kind for that warning (SQLite changes a CHECK only by making the table again).
    sql: `
      ALTER TABLE sources ADD COLUMN cdc_slot TEXT;
      CREATE TABLE source_logs_next (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations(id),
        source_id TEXT NOT NULL REFERENCES sources(id),
        kind TEXT NOT NULL CHECK (kind IN ('error', 'schema_change', 'warning')),
        table_name TEXT,
        message TEXT NOT NULL,
        details TEXT NOT NULL,
        created INTEGER NOT NULL
      );
      INSERT INTO source_logs_next SELECT id, organization_id, source_id, kind, table_name, message, details, created FROM source_logs;
      DROP TABLE source_logs;
      ALTER TABLE source_logs_next RENAME TO source_logs;
      CREATE INDEX source_logs_by_source ON source_logs (organization_id, source_id, created);
    `,
    postgres: `
      ALTER TABLE sources ADD COLUMN cdc_slot TEXT;
      ALTER TABLE source_logs DROP CONSTRAINT source_logs_kind_check;
      ALTER TABLE source_logs ADD CONSTRAINT source_logs_kind_check CHECK (kind IN ('error', 'schema_change', 'warning'));
    `,
  },
  {
    version: 20,
    name: 'query limits and tags',
    // Whether a caller's row or byte limit cut a query's result, the tags it was asked with (JSON list), which
    // query history filters by, and the bytes of the forms made from its result (CSV, Arrow), which count against
    // the organization's result storage; usage per tag, metered as it happens (query records are purged, the sums
    // are not).
    sql: `
      ALTER TABLE queries ADD COLUMN truncated INTEGER;
      ALTER TABLE queries ADD COLUMN tags TEXT;
      ALTER TABLE queries ADD COLUMN derived_bytes INTEGER;
      CREATE TABLE usage_by_tag (
        organization_id TEXT NOT NULL REFERENCES organizations(id),
        day TEXT NOT NULL,
        tag TEXT NOT NULL,
        metric TEXT NOT NULL,
        quantity INTEGER NOT NULL,
        PRIMARY KEY (organization_id, day, tag, metric)
      );
    `,
  },
  {
    version: 21,
    name: 'audit log',
    // Security-relevant actions, appended and never changed (the store offers no update or delete of them): who
    // (credential, person, or the home's own administrator), what, on what, when, from which request and address.
    sql: `
      CREATE TABLE audit_events (
        id TEXT PRIMARY KEY,
        organization_id TEXT NOT NULL REFERENCES organizations(id),
        created INTEGER NOT NULL,
        actor_kind TEXT NOT NULL,
        actor_credential TEXT,
        actor_user TEXT,
        action TEXT NOT NULL,
        target_type TEXT NOT NULL,
        target_id TEXT NOT NULL,
        details TEXT NOT NULL,
        request_id TEXT,
        client_address TEXT
      );
      CREATE INDEX audit_events_by_org ON audit_events (organization_id, created, id);
    `,
  },
  {
    version: 22,
    name: 'operators and deactivation',
    // The service operator's tokens belong to no organization (they create and deactivate organizations). An
    // organization or a person is deactivated, never deleted: their data and records stay, their credentials stop.
    sql: `
      ALTER TABLE organizations ADD COLUMN deactivated INTEGER;
      ALTER TABLE users ADD COLUMN deactivated INTEGER;
      CREATE TABLE operator_credentials (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        secret_hint TEXT NOT NULL,
        created INTEGER NOT NULL,
        last_used INTEGER,
        revoked INTEGER
      );
    `,
  },
  {
    version: 23,
    name: 'audit events of the service',
    // Audit events of the service itself (a burst of failed authentications, an operator token) have no
    // organization, so the column becomes nullable: SQLite rebuilds the table, PostgreSQL drops the constraint.
    sql: `
      CREATE TABLE audit_events_23 (
        id TEXT PRIMARY KEY,
        organization_id TEXT REFERENCES organizations(id),
        created INTEGER NOT NULL,
        actor_kind TEXT NOT NULL,
        actor_credential TEXT,
        actor_user TEXT,
        action TEXT NOT NULL,
        target_type TEXT NOT NULL,
        target_id TEXT NOT NULL,
        details TEXT NOT NULL,
        request_id TEXT,
        client_address TEXT
      );
      INSERT INTO audit_events_23 SELECT * FROM audit_events;
      DROP TABLE audit_events;
      ALTER TABLE audit_events_23 RENAME TO audit_events;
      CREATE INDEX audit_events_by_org ON audit_events (organization_id, created, id);
      CREATE INDEX audit_events_by_time ON audit_events (created, id);
    `,
    postgres: `
      ALTER TABLE audit_events ALTER COLUMN organization_id DROP NOT NULL;
      CREATE INDEX audit_events_by_time ON audit_events (created, id);
    `,
  },
  {
    version: 24,
    name: 'what saved queries read',
    // The tables a canvas element's or a send's SQL names (saved-reads.ts), kept when it is saved, so a restricted
    // caller's look at it needs no parse. NULL: not known (saved before, or SQL that does not parse); judged afresh.
    sql: `
      ALTER TABLE canvas_elements ADD COLUMN reads TEXT;
      ALTER TABLE sends ADD COLUMN reads TEXT;
    `,
  },
  {
    version: 25,
    name: 'people and tokens found by their holder',
    // An organization's active people and a person's active tokens are counted at every creation (their ceilings,
    // object-limits.ts), and a person's tokens are listed: without these, each read every person or credential of
    // every organization.
    sql: `
      CREATE INDEX users_by_org ON users (organization_id, deactivated);
      CREATE INDEX credentials_by_user ON credentials (user_id, kind, created);
    `,
  },
];
