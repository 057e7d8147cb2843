import { changeText } from '../../render/sync-progress.js';
import { randomUUID } from 'node:crypto';
import { printFields, printJson } from '../../render/record.js';
import { onBrokenPipe } from '../../render/iostreams.js';
import { startSpinner } from '../../render/spinner.js';
import { applyEvent, initialProgress, plainLine, summaryLines, type SyncProgress } from '../../render/sync-progress.js';
import { routePath, type LakeClient } from '../../client/lake-client.js';
import { JOB_ROUTES, SOURCE_ROUTES } from '../../contract/routes.js';
import type { SyncObject } from '../../contract/types.js';
import type { CommandContext } from '../context.js';
import { EXIT, usageError } from '../exit-codes.js';
import { HeldNotices } from '../../render/held-notices.js';
import { onInterrupt } from '../interrupt.js';
import { followStream, type StreamedEvent } from '../jobs/follow.js';
import { groupDigits } from '../../support/group-digits.js';

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
const outcomeCode = (status: string): number =>
  status === 'succeeded' ? EXIT.ok : TERMINAL.has(status) ? EXIT.failed : EXIT.stillRunning;

async function latestSync(client: LakeClient, source: string): Promise<SyncObject | null> {
  return (await client.read(SOURCE_ROUTES.getSource, { params: { id: source } })).latest_sync;
}

function printSync(ctx: CommandContext, sync: SyncObject): void {
  if (ctx.json) return printJson(ctx.io, sync);
  printFields(ctx.io, [
    ['sync', sync.id],
    ['status', sync.status],
    ...(sync.tables ?? []).map(
      (t) =>
        [
          t.lake_table,
          `${t.phase} ${groupDigits(t.completed)}${t.total === null ? '' : `/${groupDigits(t.total)}`}${changeText(t.changes, t.deleted)}`,
        ] as [string, unknown],
    ),
    ...(sync.error ? ([['error', `${sync.error.code}: ${sync.error.message}`]] as [string, unknown][]) : []),
  ]);
}

/**
 * Follows the source's sync stream: Ink on a terminal, one plain line per event in a pipe, NDJSON with --json.
 * EventSource reconnects by itself; when the stream ends, the source's latest sync has the final word.
 */
async function follow(
  ctx: CommandContext,
  client: LakeClient,
  source: string,
  stop: AbortSignal,
  notices: HeldNotices,
): Promise<SyncProgress> {
  let progress = initialProgress(Date.now());
  const live = ctx.io.terminalHasSize && !ctx.json && ctx.io.progressEnabled;
  let redraw: (() => void) | undefined;
  let unmount: (() => void) | undefined;
  if (live) {
    const [{ render }, React, { SyncView }] = await Promise.all([
      import('ink'),
      import('react'),
      import('../../render/sync-view.js'),
    ]);
    const frame = () => React.createElement(SyncView, { progress, now: Date.now(), notices: notices.shown });
    const view = render(frame(), { stdout: ctx.io.stdout as NodeJS.WriteStream, patchConsole: false });
    redraw = () => view.rerender(frame());
    notices.hold(() => redraw?.());
    const ticker = setInterval(() => redraw?.(), 250);
    unmount = () => {
      clearInterval(ticker);
      redraw?.();
      view.unmount();
      // After the view's last frame, so they stay on the screen.
      notices.release();
    };
  }
  try {
    await followStream(
      client,
      routePath(SOURCE_ROUTES.streamSync, { id: source }),
      (event: StreamedEvent) => {
        progress = applyEvent(progress, event, Date.now());
        if (live) redraw?.();
        else if (ctx.json) ctx.io.stdout.write(`${JSON.stringify(event)}\n`);
        else ctx.io.stdout.write(`${plainLine(event, new Date())}\n`);
      },
      stop,
    );
  } finally {
    unmount?.();
  }
  return progress;
}

export async function startSync(
  ctx: CommandContext,
  sourceRef: string,
  options: { follow?: boolean; tables?: string; fullRefresh?: boolean; detach?: boolean },
  resolveSource: (ref: string) => Promise<string>,
): Promise<void> {
  if (options.detach && options.follow) throw usageError('--detach and --follow contradict each other.');
  // Before the name is looked up, which opens the local lake: a lake opened to run syncs would take this one, and
  // cancel it as the command ends.
  if (options.detach) ctx.withoutLocalSyncs();
  const source = await resolveSource(sourceRef);
  const client = await ctx.client();
  const body: { tables?: string[]; full_refresh?: boolean } = {};
  if (options.tables)
    body.tables = options.tables
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
  if (options.fullRefresh) body.full_refresh = true;
  // A key per invocation: the client's retries of this POST cannot start two syncs.
  const accepted = await client.read(SOURCE_ROUTES.startSync, {
    params: { id: source },
    body,
    idempotencyKey: `cli-${randomUUID()}`,
  });
  if (options.detach || (!options.follow && ctx.mode === 'remote')) {
    if (ctx.json) return printJson(ctx.io, accepted);
    ctx.io.stdout.write(`${accepted.id}\n`);
    ctx.io.stderr.write(
      options.detach && ctx.mode === 'local'
        ? `lake: ${accepted.id} is queued; in local mode it runs when lake serve runs on this home\n`
        : `lake: ${accepted.id} accepted; follow it with: lake jobs events ${accepted.id} (or lake sync status ${source})\n`,
    );
    return;
  }
  const interrupt = interruptSync(ctx, client, accepted.id);
  // In local mode the sync runs in this process: if whoever reads its output goes away (`| head -3`), it is
  // recorded cancelled at once, before the process ends, rather than left running until its lease lapses.
  const forgetPipe =
    ctx.mode === 'local'
      ? onBrokenPipe(async () => {
          await client.call(JOB_ROUTES.cancelJob, { params: { id: accepted.id } });
          await waitForJobEnd(client, accepted.id);
        })
      : () => false;
  try {
    await followOrWait(ctx, client, source, accepted, options, interrupt);
  } finally {
    forgetPipe();
  }
  if (!ctx.json) await tellNewTables(ctx, client, source, accepted.id);
  if (!ctx.json) await tellSlot(ctx, client, source);
}

/** After a sync of a source with CDC: where its slot is and the WAL it keeps on the source (the slot's lag). */
async function tellSlot(ctx: CommandContext, client: LakeClient, source: string): Promise<void> {
  const cdc = (await client.read(SOURCE_ROUTES.getSource, { params: { id: source } }).catch(() => undefined))?.cdc;
  if (!cdc) return;
  ctx.io.stderr.write(
    `lake: cdc slot ${cdc.slot} at ${cdc.confirmed_lsn}, keeping ${(cdc.retained_wal_bytes / 1_048_576).toFixed(1)} MB of WAL on the source\n`,
  );
  if (cdc.warning) ctx.io.stderr.write(`lake: warning: ${cdc.warning}\n`);
}

/**
 * A sync adds the tables that appeared in the source, off (the source's log says so); the person who started it is
 * told here, with the command that turns one on. Best effort: a credential without logs:read is told nothing.
 */
async function tellNewTables(ctx: CommandContext, client: LakeClient, source: string, syncId: string): Promise<void> {
  const logs = await client
    .read(SOURCE_ROUTES.listLogs, { query: { source, kind: 'schema_change', limit: 200 } })
    .catch(() => undefined);
  const added = (logs?.data ?? [])
    .filter((entry) => entry.details.sync === syncId && typeof entry.details.added_table === 'string')
    .map((entry) => entry.details.added_table as string);
  if (added.length === 0) return;
  ctx.io.stderr.write(
    `lake: ${added.length} new table${added.length === 1 ? '' : 's'} found in the source, off until enabled: ${added.join(', ')}. Turn one on with: lake sources update ${source} --enable ${added[0]}\n`,
  );
}

/** Follows the sync (or, local and not following, waits for it) and prints how it ended. */
async function followOrWait(
  ctx: CommandContext,
  client: LakeClient,
  source: string,
  accepted: SyncObject,
  options: { follow?: boolean },
  interrupt: ReturnType<typeof interruptSync>,
): Promise<void> {
  if (options.follow) {
    let progress: SyncProgress;
    try {
      progress = await follow(ctx, client, source, interrupt.stopFollowing, interrupt.notices);
    } finally {
      interrupt.remove();
    }
    if (interrupt.stopFollowing.aborted) {
      ctx.exitCode = EXIT.interrupted;
      return;
    }
    const final = (await latestSync(client, source)) ?? accepted;
    if (!ctx.json)
      ctx.io.stderr.write(
        `${summaryLines({ ...progress, status: final.status, error: final.error?.message ?? progress.error }).join('\n')}\n`,
      );
    ctx.exitCode = interrupt.cancelling ? EXIT.interrupted : outcomeCode(final.status);
    return;
  }
  // Local, not following: the sync runs in this process, so the command waits for it (quietly, bar a spinner).
  const spinner = startSpinner(ctx.io, `syncing ${accepted.id}`);
  try {
    await followStream(client, routePath(SOURCE_ROUTES.streamSync, { id: source }), () => {});
  } finally {
    spinner.stop();
    interrupt.remove();
  }
  const final = (await latestSync(client, source)) ?? accepted;
  printSync(ctx, final);
  ctx.exitCode = interrupt.cancelling ? EXIT.interrupted : outcomeCode(final.status);
}

/**
 * ^C while a sync is followed. In local mode the sync runs in this process: the first ^C cancels it (tables
 * already committed stay) and the command waits for it to stop; a second quits at once. Against a service the
 * sync goes on there: the first ^C stops following and says how to follow or cancel it.
 */
function interruptSync(
  ctx: CommandContext,
  client: LakeClient,
  id: string,
): { stopFollowing: AbortSignal; cancelling: boolean; notices: HeldNotices; remove: () => void } {
  const stopFollowing = new AbortController();
  // A live view redraws over whatever else is written: these wait for it to end (held-notices.ts).
  const notices = new HeldNotices(ctx.io.stderr);
  const state = {
    stopFollowing: stopFollowing.signal,
    cancelling: false,
    notices,
    remove: onInterrupt(() => {
      if (ctx.mode === 'local') {
        state.cancelling = true;
        notices.write(`\nlake: cancelling ${id}; tables already committed stay (^C again to quit at once)\n`);
        client.call(JOB_ROUTES.cancelJob, { params: { id } }).catch((error: unknown) => {
          notices.write(`lake: could not cancel ${id}: ${error instanceof Error ? error.message : String(error)}\n`);
        });
        return;
      }
      notices.write(
        `\nlake: stopped following; ${id} goes on running on the server. Follow it again with: lake jobs events ${id}; cancel it with: lake jobs cancel ${id}\n`,
      );
      stopFollowing.abort();
    }),
  };
  return state;
}

export async function syncStatus(ctx: CommandContext, source: string): Promise<void> {
  const sync = await latestSync(await ctx.client(), source);
  if (!sync) {
    if (ctx.json) return printJson(ctx.io, { object: 'sync', latest: null });
    ctx.io.stderr.write(`lake: source ${source} has never synced\n`);
    return;
  }
  printSync(ctx, sync);
  ctx.exitCode = outcomeCode(sync.status);
}

/** Waits, a few seconds at most, for a job to leave queued and running. */
async function waitForJobEnd(client: LakeClient, id: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const job = await client.read(JOB_ROUTES.getJob, { params: { id } });
    if (TERMINAL.has(job.status)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
