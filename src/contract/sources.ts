import { Failure, Nullable, OneOf, Strict, Timestamp, Type } from './schema.js';

export const TablePhase = OneOf(['queued', 'extracting', 'loading', 'committed', 'failed']);

/** One table of a sync, as the sync object and `sync.progress` events show it. */
export const SyncTable = Strict({
  table: Type.String({ description: '`schema.table` in the source.' }),
  lake_table: Type.String({ description: '`lake.<schema>.<table>`.' }),
  phase: TablePhase,
  completed: Type.Integer({ minimum: 0, description: 'Rows written so far.' }),
  total: Nullable(Type.Integer({ minimum: 0, description: "The source's estimate of the table's rows." })),
  error: Type.Optional(Type.String({ description: 'Why this table failed (phase failed); its rows are never shown.' })),
  deleted: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        "Lake's addition, for a table with detect_deletes: rows removed from the lake because the source deleted them.",
    }),
  ),
  changes: Type.Optional(
    Strict(
      {
        inserts: Type.Integer({ minimum: 0 }),
        updates: Type.Integer({ minimum: 0 }),
        deletes: Type.Integer({ minimum: 0 }),
      },
      "Lake's addition, for a cdc table: the changes this sync read from the slot and applied.",
    ),
  ),
});

export const Sync = Strict(
  {
    object: Type.Literal('sync'),
    id: Type.String({ pattern: '^sync_' }),
    source: Type.String(),
    status: OneOf(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
    created: Timestamp,
    started: Nullable(Timestamp),
    finished: Nullable(Timestamp),
    full_refresh: Type.Boolean(),
    requested_tables: Nullable(Type.Array(Type.String())),
    trigger: OneOf(['manual', 'schedule'], {
      description: "Lake's addition: asked for by a caller (`manual`) or started by the source's schedule.",
    }),
    tables: Type.Optional(
      Type.Array(SyncTable, {
        description:
          "Each table's phase and counts; left out of a source in a list (get the source or the sync for them).",
      }),
    ),
    rows: Type.Integer({ minimum: 0, description: 'Rows of the tables committed so far.' }),
    error: Nullable(Failure),
    job: Type.String({ description: 'The path of the job the sync is.' }),
  },
  'A sync of a source into the lake (also a job of kind sync).',
);

export const SyncRequestBody = Strict({
  full_refresh: Type.Optional(
    Type.Boolean({ default: false, description: 'Reload every table in full, even incremental ones.' }),
  ),
  tables: Type.Optional(
    Type.Array(Type.String({ minLength: 1 }), {
      minItems: 1,
      description: 'Only these `schema.table` names; all enabled tables when absent.',
    }),
  ),
});

const Column = Strict({ name: Type.String(), type: Type.String(), nullable: Type.Boolean() });

export const SourceTable = Strict({
  schema: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean(),
  mode: Type.Union([Type.Literal('full'), Type.Literal('incremental'), Type.Literal('cdc')]),
  cursor_column: Nullable(Type.String()),
  primary_key: Type.Array(Type.String()),
  detect_deletes: Type.Boolean({
    description:
      "Lake's addition: an incremental table whose rows deleted in the source leave the lake too (each sync reads the source's primary keys).",
  }),
  estimated_rows: Nullable(Type.Integer()),
  columns: Type.Array(Column, {
    description:
      "Its columns; empty for a table past discovery's column budget (LAKE_SOURCE_MAX_COLUMNS): column_count still says how many.",
  }),
  column_count: Type.Integer({ minimum: 0, description: 'How many columns the table has.' }),
  lake_table: Type.String({
    description:
      "The lake table it lands in, in the source's lake schema: unique case-insensitively (a later table whose name collides takes `_2`, `_3` …).",
  }),
});

export const TestReason = OneOf(
  [
    'unreachable',
    'timeout',
    'authentication_failed',
    'database_not_found',
    'permission_denied',
    'tls_required',
    'unknown',
  ],
  {
    description: 'Deliberately generic: never a host, a user or a driver message.',
  },
);

export const Schedule = Strict(
  {
    interval: Nullable(Type.String({ description: 'Every this long: `15m`, `1h`, `1h30m`, `2d` (1m to 31d).' })),
    cron: Nullable(
      Type.String({ description: 'Five fields (minute hour day-of-month month day-of-week), or @hourly … @yearly.' }),
    ),
    time_zone: Nullable(Type.String({ description: "The cron expression's IANA time zone; null for an interval." })),
  },
  "When the source syncs by itself (lake's addition): one of interval and cron.",
);

/** A schedule as a caller sets it: an interval, or a cron expression with its time zone (UTC when left out). */
export const ScheduleInput = Strict({
  interval: Type.Optional(Nullable(Type.String({ maxLength: 32 }))),
  cron: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  time_zone: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
});

export const Source = Strict(
  {
    object: Type.Literal('source'),
    id: Type.String({ pattern: '^src_' }),
    name: Type.String(),
    connector: Type.String(),
    lake_schema: Type.String({ description: 'The lake schema its tables are written to; fixed at creation.' }),
    status: Type.Union([Type.Literal('active'), Type.Literal('paused')]),
    paused: Type.Boolean(),
    created: Timestamp,
    updated: Timestamp,
    config: Type.Record(Type.String(), Type.Unknown(), {
      description: "The connector's configuration fields (GET /connectors/{name}).",
    }),
    credentials: Type.Record(Type.String(), Type.Literal('set'), {
      description: 'Which credentials are stored; their values are never returned.',
    }),
    latest_sync: Nullable(Sync),
    tables: Type.Optional(
      Type.Array(SourceTable, {
        description:
          'The table configuration; left out of lists (GET /sources), which give table_count and enabled_table_count.',
      }),
    ),
    table_count: Type.Integer({ minimum: 0, description: 'Tables discovered (at most LAKE_SOURCE_MAX_TABLES).' }),
    enabled_table_count: Type.Integer({ minimum: 0, description: 'Of those, the ones a sync reads.' }),
    discovered: Nullable(Timestamp),
    last_test: Nullable(
      Strict({ supported: Type.Boolean(), ok: Type.Boolean(), reason: Nullable(TestReason), at: Timestamp }),
    ),
    schedule: Nullable(Schedule),
    cdc: Type.Union(
      [
        Strict({
          slot: Type.String({ description: 'The replication slot lake owns on the source (lake_<source id>).' }),
          publication: Type.String(),
          confirmed_lsn: Type.String({
            description: 'Where the slot was last moved to: changes before are in the lake.',
          }),
          retained_wal_bytes: Type.Integer({ description: 'WAL the source keeps for the slot.' }),
          wal_status: Nullable(Type.String()),
          checked: Timestamp,
          warning: Nullable(Type.String()),
        }),
        Type.Null(),
      ],
      { description: "Lake's addition: the source's CDC slot as the last sync saw it; null without one." },
    ),
    next_sync_at: Type.Union([Timestamp, Type.Null()], {
      description:
        'When the schedule next starts a sync (lake serve runs schedules); null without a schedule or while paused.',
    }),
  },
  'A connected data source, its table configuration and its latest sync.',
);

const TableChange = Strict({
  schema: Type.String(),
  name: Type.String(),
  enabled: Type.Optional(Type.Boolean()),
  mode: Type.Optional(Type.Union([Type.Literal('full'), Type.Literal('incremental'), Type.Literal('cdc')])),
  cursor_column: Type.Optional(Nullable(Type.String())),
  primary_key: Type.Optional(Type.Array(Type.String())),
  detect_deletes: Type.Optional(Type.Boolean()),
});

const Credential = Type.String({ minLength: 1, maxLength: 1000 });
/** Credentials travel as top-level fields (which ones: the connector's fields marked credential). */
const credentialFields = {
  host: Type.Optional(Credential),
  user: Type.Optional(Credential),
  password: Type.Optional(Credential),
};

export const SourceCreation = Type.Object(
  {
    connector: Type.String({ description: 'GET /connectors lists them.' }),
    name: Type.Optional(Type.String()),
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    schedule: Type.Optional(Nullable(ScheduleInput)),
    ...credentialFields,
  },
  {
    additionalProperties: Credential,
    description: "Fields are checked against the connector's (invalid_source_parameters names the field).",
  },
);

export const SourceChange = Type.Object(
  {
    name: Type.Optional(Type.String()),
    paused: Type.Optional(Type.Boolean()),
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    tables: Type.Optional(Type.Array(TableChange)),
    schedule: Type.Optional(
      Type.Union([ScheduleInput, Type.Null()], { description: 'A new schedule, or null for none.' }),
    ),
    ...credentialFields,
  },
  { additionalProperties: Credential },
);

export const SourceDeletion = Strict({
  object: Type.Literal('source_deletion'),
  id: Type.String(),
  deleted: Type.Literal(true),
  data_retained: Type.Literal(true),
});

export const SourceTest = Strict({
  object: Type.Literal('source_test'),
  source: Type.String(),
  supported: Type.Boolean(),
  ok: Type.Boolean(),
  reason: Nullable(TestReason),
  /** Lake's addition: tables this test found that the source did not have, added off (none at the first discovery). */
  new_tables: Type.Array(Type.String()),
});

const ConnectorField = Strict({
  name: Type.String(),
  type: OneOf(['string', 'integer', 'boolean', 'choice', 'string_list']),
  required: Type.Boolean(),
  credential: Type.Boolean(),
  description: Type.String(),
  default: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Array(Type.String())])),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
  choices: Type.Optional(Type.Array(Type.String())),
});

export const Connector = Strict({
  object: Type.Literal('connector'),
  name: Type.String(),
  title: Type.String(),
  auth: Type.Union([Type.Literal('key'), Type.Literal('oauth'), Type.Literal('none')]),
  syncs: Type.Boolean(),
  staff_only: Type.Boolean(),
  alias_of: Nullable(Type.String()),
  live_test: Type.Boolean(),
  accepted_by_post_sources: Type.Boolean(),
  refusal: Type.Optional(Type.String({ description: 'Why POST /sources refuses this connector.' })),
  fields: Type.Array(ConnectorField),
});

export const LogEntry = Strict({
  object: Type.Literal('log_entry'),
  id: Type.String(),
  source: Type.String(),
  kind: Type.Union([Type.Literal('schema_change'), Type.Literal('error'), Type.Literal('warning')], {
    description: "warning is lake's addition: a CDC slot that keeps more WAL on the source than its limit.",
  }),
  table: Nullable(Type.String()),
  message: Type.String(),
  details: Type.Record(Type.String(), Type.Unknown()),
  created: Timestamp,
});
