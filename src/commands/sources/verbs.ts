import { printFields, printJson } from '../../render/record.js';
import type { LakeClient } from '../../client/lake-client.js';
import { SOURCE_ROUTES } from '../../contract/routes.js';
import type { ConnectorObject, SourceChangeBody, SourceCreationBody, SourceObject } from '../../contract/types.js';
import type { CommandContext } from '../context.js';
import { LakeApiError } from '../../client/errors.js';
import { CliError, EXIT, usageError } from '../exit-codes.js';
import { assertOutputFlags, printList, printRows, readBodyFile, when, type PageOptions } from '../listing.js';
import { readPassword, readSecret } from './secret-input.js';
import { whatToCheck } from './test-hints.js';

/** `key=value` settings typed by the connector's field list; credentials (host, user) go to the top level. */
function applySettings(connector: ConnectorObject, pairs: readonly string[], body: Record<string, unknown>): void {
  const config = (body.config ?? {}) as Record<string, unknown>;
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usageError(`--config takes key=value, not '${pair}'.`);
    const key = pair.slice(0, eq);
    const raw = pair.slice(eq + 1);
    const field = connector.fields.find((f) => f.name === key);
    if (!field)
      throw usageError(
        `A ${connector.name} source has no setting '${key}'. Settings: ${connector.fields.map((f) => f.name).join(', ')}.`,
      );
    if (key === 'password')
      throw usageError('Passwords never go on the command line; use --password-stdin, or leave it out to be asked.');
    const value =
      field.type === 'integer'
        ? Number(raw)
        : field.type === 'boolean'
          ? raw === 'true'
          : field.type === 'string_list'
            ? raw
                .split(',')
                .map((s) => s.trim())
                .filter(Boolean)
            : raw;
    if (field.credential) body[key] = value;
    else config[key] = value;
  }
  if (Object.keys(config).length > 0) body.config = config;
}

async function connectorOf(client: LakeClient, name: string): Promise<ConnectorObject> {
  return client.read(SOURCE_ROUTES.getConnector, { params: { name } }).catch((error: unknown) => {
    if (error instanceof LakeApiError && error.status === 404)
      throw new CliError(
        'connector_not_found',
        `There is no connector '${name.slice(0, 64)}'.`,
        EXIT.usage,
        'lake connectors ls lists the connectors lake knows.',
      );
    throw error;
  });
}

/** `lake connectors get NAME`: a connector's settings, which of them are credentials, and what each means. */
export async function getConnector(ctx: CommandContext, name: string): Promise<void> {
  const connector = await connectorOf(await ctx.client(), name);
  if (ctx.json) return printJson(ctx.io, connector);
  printFields(ctx.io, [
    ['name', connector.name],
    ['title', connector.title],
    ['live test', connector.live_test ? 'yes' : 'no'],
    ['sources create', connector.accepted_by_post_sources ? 'yes' : (connector.refusal ?? 'no')],
  ]);
  await printRows(
    ctx,
    undefined,
    ['setting', 'type', 'required', 'credential', 'description'],
    connector.fields.map((f) => ({
      setting: f.name,
      type: f.type,
      required: f.required,
      credential: f.credential,
      description: f.description,
    })),
  );
}

async function showSource(ctx: CommandContext, source: SourceObject): Promise<void> {
  if (ctx.json) return printJson(ctx.io, source);
  printFields(ctx.io, [
    ['id', source.id],
    ['name', source.name],
    ['connector', source.connector],
    ['status', source.status],
    [
      'config',
      Object.entries(source.config)
        .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`)
        .join(' '),
    ],
    ['credentials set', Object.keys(source.credentials).join(' ') || 'none'],
    ['latest sync', source.latest_sync ? `${source.latest_sync.id} ${source.latest_sync.status}` : 'never'],
    ['schedule', scheduleText(source.schedule)],
    ...(source.cdc
      ? ([
          [
            'cdc slot',
            `${source.cdc.slot} at ${source.cdc.confirmed_lsn}, keeps ${formatMb(source.cdc.retained_wal_bytes)} of WAL`,
          ],
          ...(source.cdc.warning ? [['warning', source.cdc.warning]] : []),
        ] as [string, unknown][])
      : []),
    [
      'next sync',
      source.next_sync_at !== null ? when(source.next_sync_at) : source.schedule && source.paused ? 'paused' : '-',
    ],
    [
      'last test',
      source.last_test
        ? `${source.last_test.ok ? 'ok' : (source.last_test.reason ?? 'not supported')} at ${when(source.last_test.at)}`
        : 'never',
    ],
  ]);
  const tables = source.tables ?? [];
  if (tables.length > 0) {
    if (ctx.io.isStdoutTTY) ctx.io.stdout.write('\n');
    await printRows(
      ctx,
      undefined,
      ['table', 'enabled', 'mode', 'cursor', 'primary_key', 'estimated_rows'],
      tables.map((t) => ({
        table: `${t.schema}.${t.name}`,
        enabled: t.enabled,
        mode: t.detect_deletes ? `${t.mode}+deletes` : t.mode,
        cursor: t.cursor_column,
        primary_key: t.primary_key.join(','),
        estimated_rows: t.estimated_rows,
      })),
    );
  }
}

export async function listConnectors(ctx: CommandContext, options: { output?: string }): Promise<void> {
  assertOutputFlags(ctx, options.output);
  const body = await (await ctx.client()).read(SOURCE_ROUTES.listConnectors, {});
  if (ctx.json) return printJson(ctx.io, body);
  await printRows(
    ctx,
    options.output,
    ['name', 'title', 'auth', 'syncs', 'create'],
    body.data.map((c) => ({
      name: c.name,
      title: c.title,
      auth: c.auth,
      syncs: c.syncs,
      create: c.accepted_by_post_sources ? 'yes' : (c.refusal ?? 'no'),
    })),
  );
}

export async function listSources(ctx: CommandContext, options: PageOptions): Promise<void> {
  await printList(ctx, options, {
    route: SOURCE_ROUTES.listSources,
    columns: ['id', 'name', 'connector', 'status', 'tables', 'latest_sync', 'next_sync', 'created'],
    row: (s) => ({
      id: s.id,
      name: s.name,
      connector: s.connector,
      status: s.status,
      tables: `${s.enabled_table_count}/${s.table_count}`,
      latest_sync: s.latest_sync?.status ?? null,
      next_sync: s.next_sync_at === null ? null : when(s.next_sync_at),
      created: when(s.created),
    }),
  });
}

export async function getSource(ctx: CommandContext, id: string): Promise<void> {
  await showSource(ctx, await (await ctx.client()).read(SOURCE_ROUTES.getSource, { params: { id } }));
}

export async function createSource(ctx: CommandContext, options: Record<string, unknown>): Promise<void> {
  const client = await ctx.client();
  const body = options.fromFile ? readBodyFile(String(options.fromFile)) : {};
  if (options.connector) body.connector = options.connector;
  if (options.name) body.name = options.name;
  if (typeof body.connector !== 'string')
    throw usageError('Name the connector with --connector (lake connectors ls lists them).');
  const connector = await connectorOf(client, body.connector);
  applySettings(connector, (options.config as string[] | undefined) ?? [], body);
  applySchedule(options, body);
  if (connector.fields.some((f) => f.name === 'password') && body.password === undefined) {
    const password = await readPassword(ctx, options);
    if (password !== undefined) body.password = password;
  }
  // Assembled from a file, flags and a prompt; the service checks it against the contract.
  const created = await client.read(SOURCE_ROUTES.createSource, { body: body as SourceCreationBody });
  await showSource(ctx, created);
  // A source whose database could not be reached is still created (it may come up later), but not in silence.
  if (connector.live_test && created.table_count === 0) {
    const test = await client.read(SOURCE_ROUTES.testSource, { params: { id: created.id } });
    if (!test.ok) {
      ctx.io.stderr.write(
        `lake: warning: ${created.id} was created, but its database could not be used (${test.reason ?? 'unknown'}), so no tables were discovered: ${whatToCheck(test.reason, created.id)}; then lake sources test ${created.id}.\n`,
      );
    }
  }
}

/**
 * `--schedule`, `--time-zone` and `--no-schedule` as the body's schedule: text that reads as an interval (15m, 1h30m)
 * is one, anything else a cron expression; the service checks both.
 */
function applySchedule(options: Record<string, unknown>, body: Record<string, unknown>): void {
  const zone = options.timeZone as string | undefined;
  if (options.schedule === false) {
    if (zone !== undefined) throw usageError('--time-zone goes with a cron --schedule, not --no-schedule.');
    body.schedule = null;
    return;
  }
  if (typeof options.schedule !== 'string') {
    if (zone !== undefined) throw usageError('--time-zone goes with a cron --schedule ("0 6 * * *").');
    return;
  }
  const when = options.schedule.trim();
  if (/^(\d+[dhm])+$/.test(when)) {
    if (zone !== undefined) throw usageError('An interval has no time zone; --time-zone goes with a cron --schedule.');
    body.schedule = { interval: when };
  } else body.schedule = { cron: when, ...(zone !== undefined ? { time_zone: zone } : {}) };
}

const formatMb = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MB`;

/** A schedule as one line: "every 15m" or "0 6 * * 1-5 (Europe/Berlin)". */
export function scheduleText(schedule: SourceObject['schedule']): string {
  if (!schedule) return 'none (lake sync start)';
  return schedule.interval !== null ? `every ${schedule.interval}` : `${schedule.cron} (${schedule.time_zone})`;
}

function tableChange(text: string, extra: Record<string, unknown>): Record<string, unknown> {
  const dot = text.indexOf('.');
  if (dot <= 0) throw usageError(`Name the table as <schema>.<table>, not '${text}'.`);
  return { schema: text.slice(0, dot), name: text.slice(dot + 1), ...extra };
}

export async function updateSource(ctx: CommandContext, id: string, options: Record<string, unknown>): Promise<void> {
  const client = await ctx.client();
  const body = options.fromFile ? readBodyFile(String(options.fromFile)) : {};
  if (options.name) body.name = options.name;
  const pairs = (options.config as string[] | undefined) ?? [];
  if (pairs.length > 0)
    applySettings(
      await connectorOf(client, (await client.read(SOURCE_ROUTES.getSource, { params: { id } })).connector),
      pairs,
      body,
    );
  if (options.passwordStdin) body.password = await readSecret(ctx, 'Password', true);
  const tables: Record<string, unknown>[] = [];
  for (const t of (options.enable as string[] | undefined) ?? []) tables.push(tableChange(t, { enabled: true }));
  for (const t of (options.disable as string[] | undefined) ?? []) tables.push(tableChange(t, { enabled: false }));
  for (const t of (options.full as string[] | undefined) ?? []) tables.push(tableChange(t, { mode: 'full' }));
  for (const t of (options.cdc as string[] | undefined) ?? []) tables.push(tableChange(t, { mode: 'cdc' }));
  for (const t of (options.incremental as string[] | undefined) ?? []) {
    const colon = t.lastIndexOf(':');
    if (colon <= 0) throw usageError(`--incremental takes <schema>.<table>:<cursor column>, not '${t}'.`);
    tables.push(tableChange(t.slice(0, colon), { mode: 'incremental', cursor_column: t.slice(colon + 1) }));
  }
  for (const t of (options.detectDeletes as string[] | undefined) ?? [])
    tables.push(tableChange(t, { detect_deletes: true }));
  for (const t of (options.keepDeletes as string[] | undefined) ?? [])
    tables.push(tableChange(t, { detect_deletes: false }));
  if (tables.length > 0) body.tables = [...((body.tables as unknown[] | undefined) ?? []), ...tables];
  applySchedule(options, body);
  if (Object.keys(body).length === 0) throw usageError('Say what to change (see lake sources update --help).');
  await showSource(
    ctx,
    await client.read(SOURCE_ROUTES.updateSource, { params: { id }, body: body as SourceChangeBody }),
  );
}

export async function setPaused(ctx: CommandContext, id: string, paused: boolean): Promise<void> {
  const source = await (await ctx.client()).read(SOURCE_ROUTES.updateSource, { params: { id }, body: { paused } });
  if (ctx.json) return printJson(ctx.io, source);
  ctx.io.stderr.write(`lake: source ${id} is ${source.status}\n`);
}

export async function testSource(ctx: CommandContext, id: string): Promise<void> {
  const result = await (await ctx.client()).read(SOURCE_ROUTES.testSource, { params: { id } });
  if (ctx.json) printJson(ctx.io, result);
  else
    printFields(ctx.io, [
      ['supported', result.supported],
      ['ok', result.ok],
      ...(result.reason ? ([['reason', result.reason]] as [string, unknown][]) : []),
    ]);
  if (!ctx.json && result.new_tables.length > 0) {
    const names = result.new_tables;
    ctx.io.stderr.write(
      `lake: ${names.length} new table${names.length === 1 ? '' : 's'} found, off until enabled: ${names.join(', ')}. Turn one on with: lake sources update ${id} --enable ${names[0]}\n`,
    );
  }
  if (result.supported && !result.ok) {
    if (!ctx.json) ctx.io.stderr.write(`lake: the source could not be used: ${whatToCheck(result.reason, id)}.\n`);
    ctx.exitCode = EXIT.failed;
  }
}

export async function deleteSource(ctx: CommandContext, id: string): Promise<void> {
  const deleted = await (await ctx.client()).read(SOURCE_ROUTES.deleteSource, { params: { id } });
  if (ctx.json) return printJson(ctx.io, deleted);
  ctx.io.stderr.write(`lake: deleted source ${id}; its lake tables stay\n`);
}
