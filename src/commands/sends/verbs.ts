import { randomUUID } from 'node:crypto';
import { printFields, printJson } from '../../render/record.js';
import { startSpinner } from '../../render/spinner.js';
import { SEND_ROUTES } from '../../contract/routes.js';
import type { SendCreationBody, SendObject, SendRunObject } from '../../contract/types.js';
import type { CommandContext } from '../context.js';
import { EXIT, usageError } from '../exit-codes.js';
import { followJob } from '../jobs/follow.js';
import { printList, readBodyFile, when, type PageOptions } from '../listing.js';
import { readPassword, readSecret } from '../sources/secret-input.js';
import { readTextFile } from '../text-input.js';

type RunObject = SendRunObject;

/** Where a send delivers, in one line: the webhook URL, or schema.table with its mode and key. */
function target(send: SendObject): string {
  const d = send.destination;
  if (d.type === 'webhook') return `webhook ${d.url} (${d.format})`;
  const key = d.key.length > 0 ? ` on ${d.key.join(',')}` : '';
  return `postgres ${d.database}.${d.schema}.${d.table} (${d.mode}${key})`;
}

function showSend(ctx: CommandContext, send: SendObject): void {
  if (ctx.json) return printJson(ctx.io, send);
  printFields(ctx.io, [
    ['id', send.id],
    ['name', send.name],
    ['status', send.status],
    ['to', target(send)],
    ['credentials set', Object.keys(send.destination.credentials).join(' ')],
    ['schedule', send.schedule ? `every ${send.schedule.every_minutes} min` : 'on demand'],
    ['next run', send.next_run === null ? null : when(send.next_run)],
    [
      'last run',
      send.last_run ? `${send.last_run.id} ${send.last_run.status}, ${send.last_run.rows_sent} rows` : 'never',
    ],
    ['sql', send.sql],
  ]);
}

export async function listSends(ctx: CommandContext, options: PageOptions): Promise<void> {
  await printList(ctx, options, {
    route: SEND_ROUTES.listSends,
    columns: ['id', 'name', 'status', 'to', 'schedule', 'last_run', 'rows_sent'],
    row: (s) => ({
      id: s.id,
      name: s.name,
      status: s.status,
      to: target(s),
      schedule: s.schedule ? `every ${s.schedule.every_minutes} min` : 'on demand',
      last_run: s.last_run?.status ?? null,
      rows_sent: s.last_run?.rows_sent ?? null,
    }),
  });
}

export async function getSend(ctx: CommandContext, id: string): Promise<void> {
  showSend(ctx, await (await ctx.client()).read(SEND_ROUTES.getSend, { params: { id } }));
}

const wholeNumber = (flag: string, raw: unknown): number => {
  const value = Number(raw);
  if (!Number.isInteger(value)) throw usageError(`${flag} takes a whole number, not '${String(raw)}'.`);
  return value;
};

/** The destination from flags; only the flags given are sent, so the service's defaults and checks apply. */
function destinationFromFlags(options: Record<string, unknown>): Record<string, unknown> {
  const type = options.to;
  if (type !== 'postgres' && type !== 'webhook')
    throw usageError('Say where to send with --to postgres or --to webhook.');
  const destination: Record<string, unknown> = { type };
  const copy = (flag: string, field: string, convert?: (v: unknown) => unknown): void => {
    if (options[flag] !== undefined) destination[field] = convert ? convert(options[flag]) : options[flag];
  };
  if (type === 'webhook') {
    copy('url', 'url');
    copy('format', 'format');
    copy('batchSize', 'batch_size', (v) => wholeNumber('--batch-size', v));
  } else {
    for (const [flag, field] of [
      ['host', 'host'],
      ['database', 'database'],
      ['user', 'user'],
      ['sslMode', 'ssl_mode'],
      ['schema', 'schema'],
      ['table', 'table'],
      ['mode', 'mode'],
    ])
      copy(flag as string, field as string);
    copy('port', 'port', (v) => wholeNumber('--port', v));
    copy('key', 'key', (v) =>
      String(v)
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean),
    );
  }
  return destination;
}

export async function createSend(ctx: CommandContext, options: Record<string, unknown>): Promise<void> {
  if (options.sql !== undefined && options.sqlFile !== undefined)
    throw usageError('Give the SQL with --sql or --sql-file, not both.');
  const body = options.fromFile ? readBodyFile(String(options.fromFile)) : {};
  if (options.name !== undefined) body.name = options.name;
  if (options.sql !== undefined) body.sql = options.sql;
  if (options.sqlFile !== undefined) body.sql = readTextFile(String(options.sqlFile));
  if (options.every !== undefined) body.schedule = { every_minutes: wholeNumber('--every', options.every) };
  if (options.paused) body.paused = true;
  if (options.to !== undefined || body.destination === undefined) body.destination = destinationFromFlags(options);
  const destination = body.destination as Record<string, unknown>;
  if (destination.type === 'postgres' && destination.password === undefined) {
    const password = await readPassword(ctx, options);
    if (password !== undefined) destination.password = password;
  }
  if (destination.type === 'webhook' && options.secretStdin)
    destination.secret = await readSecret(ctx, 'Signing secret', true);
  // Assembled from a file and flags; the service checks it against the contract.
  const created = await (await ctx.client()).read(SEND_ROUTES.createSend, { body: body as SendCreationBody });
  showSend(ctx, created);
  if (created.signing_secret && !ctx.json) {
    ctx.io.stdout.write(
      ctx.io.isStdoutTTY
        ? `\nsigning secret (shown once; receivers verify Lake-Signature with it):\n${created.signing_secret}\n`
        : `signing_secret\t${created.signing_secret}\n`,
    );
  }
}

export async function setPaused(ctx: CommandContext, id: string, paused: boolean): Promise<void> {
  const send = await (await ctx.client()).read(SEND_ROUTES.updateSend, { params: { id }, body: { paused } });
  if (ctx.json) return printJson(ctx.io, send);
  ctx.io.stderr.write(`lake: send ${id} is ${send.status}\n`);
}

function showRun(ctx: CommandContext, run: RunObject): void {
  if (ctx.json) return printJson(ctx.io, run);
  printFields(ctx.io, [
    ['run', run.id],
    ['status', run.status],
    ['rows sent', run.rows_sent],
    ['batches', run.batches],
    ['query', run.query],
    ...(run.error ? ([['error', `${run.error.code}: ${run.error.message}`]] as [string, unknown][]) : []),
  ]);
}

/** Runs the send and waits: in local mode the run happens in this process, and remotely the outcome is the answer. */
export async function runSend(ctx: CommandContext, id: string): Promise<void> {
  const client = await ctx.client();
  // A key per invocation: the client's retries of this POST (a 503, a lost answer) cannot deliver twice.
  const accepted = await client.read(SEND_ROUTES.runSend, { params: { id }, idempotencyKey: `cli-${randomUUID()}` });
  const spinner = ctx.json ? undefined : startSpinner(ctx.io, `sending ${accepted.id}`);
  try {
    await followJob(client, accepted.id, () => {});
  } finally {
    spinner?.stop();
  }
  const run = await client.read(SEND_ROUTES.getSendRun, { params: { id, run: accepted.id } });
  showRun(ctx, run);
  ctx.exitCode = run.status === 'succeeded' ? EXIT.ok : EXIT.failed;
}

export async function listRuns(ctx: CommandContext, id: string, options: PageOptions): Promise<void> {
  await printList(ctx, options, {
    route: SEND_ROUTES.listSendRuns,
    params: { id },
    columns: ['id', 'status', 'trigger', 'rows_sent', 'batches', 'created', 'finished', 'error'],
    row: (r) => ({
      id: r.id,
      status: r.status,
      trigger: r.trigger,
      rows_sent: r.rows_sent,
      batches: r.batches,
      created: when(r.created),
      finished: r.finished === null ? null : when(r.finished),
      error: r.error?.message ?? null,
    }),
  });
}

export async function deleteSend(ctx: CommandContext, id: string): Promise<void> {
  const deleted = await (await ctx.client()).read(SEND_ROUTES.deleteSend, { params: { id } });
  if (ctx.json) return printJson(ctx.io, deleted);
  ctx.io.stderr.write(`lake: deleted send ${id}; data it delivered stays\n`);
}
