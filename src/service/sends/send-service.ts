import type { Principal } from '../auth/principal.js';
import type { CredentialStore } from '../auth/credentials.js';
import type { Directory } from '../auth/directory.js';
import { assertCreatorOrOwner } from '../auth/ownership.js';
import type { Clock } from '../core/clock.js';
import { guardSql } from '../engine/sql-guard.js';
import type { AuditLog } from '../auth/audit-log.js';
import { LakeServiceError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { hashRequest, IdempotencyStore, type IdempotencyScope } from '../idempotency/idempotency.js';
import type { JobRuntime } from '../jobs/job-runtime.js';
import { Scheduler } from '../jobs/scheduler.js';
import type { JobRecord, JobStore } from '../jobs/job-store.js';
import type { QueryService } from '../queries/query-service.js';
import { principalIdOf } from '../auth/ownership.js';
import type { QueryResults } from '../queries/query-results.js';
import type { SecretBox } from '../sources/secret-box.js';
import { lock, type MetadataDb } from '../store/metadata-db.js';
import { assertRoomFor, DEFAULT_OBJECT_LIMITS } from '../limits/object-limits.js';
import type { UsageService } from '../usage/usage-service.js';
import { DEFAULT_WEBHOOK_RETRY } from './deliveries/webhook-delivery.js';
import { checkDestination, type Destination, type DestinationInput } from './deliveries/destination.js';
import { SendStore, type SendRecord, type SendRunRecord } from './send-store.js';
import { SendRunner } from './send-runner.js';
import type { SendSettings } from './settings.js';

const invalid = (param: string, message: string): LakeServiceError =>
  new LakeServiceError('parameter_invalid', message, { param });

function checkName(value: string): string {
  if (value.trim().length === 0 || value.length > 200)
    throw invalid('name', 'name must be a non-empty string of at most 200 characters.');
  return value.trim();
}

function checkSql(value: string): string {
  if (value.trim() === '') throw invalid('sql', 'sql must be a non-empty string.');
  guardSql(value); // refuses writes, several statements and file access now, not at the first run
  return value;
}

/** A send as asked for; the destination's fields depend on its type and are checked with it. */
export interface SendInput {
  name: string;
  sql: string;
  destination: DestinationInput;
  /** Every so many minutes (1 minute to 7 days), or null for on demand only. */
  schedule?: { every_minutes: number } | null;
  paused?: boolean;
}

/** A change to a send: its destination is fixed (given here only to be refused with a reason). */
export interface SendChange {
  name?: string;
  sql?: string;
  destination?: unknown;
  schedule?: { every_minutes: number } | null;
  paused?: boolean;
}

/** A run with its job (its status, times and failure). */
export interface SendRunView {
  run: SendRunRecord;
  job: JobRecord | undefined;
}

/** A send with its latest run. */
export interface SendView {
  send: SendRecord;
  lastRun: SendRunView | null;
}

/**
 * Sends: a saved query whose result is delivered to a PostgreSQL table or a webhook, on demand or on a schedule.
 * Each run is a job of kind `send` that runs in the process that accepted it (lake serve runs the schedules). The
 * SQL runs as the credential that created the send, with that credential's table permissions at run time.
 */
/** What the audit log says of a destination: its kind and host, never a path, query string or secret. */
function destinationSummary(destination: Destination): Record<string, unknown> {
  return destination.type === 'webhook'
    ? { type: 'webhook', host: new URL(destination.url).hostname }
    : { type: destination.type, database: destination.database };
}

export class SendService {
  readonly store: SendStore;
  private readonly scheduler: Scheduler<SendRecord, SendRunRecord>;
  private readonly runner: SendRunner;
  private readonly idempotency: IdempotencyStore;

  constructor(
    private readonly db: MetadataDb,
    private readonly jobs: JobStore,
    private readonly queries: QueryService,
    results: QueryResults,
    credentials: CredentialStore,
    private readonly directory: Directory,
    private readonly secretBox: SecretBox,
    private readonly clock: Clock,
    private readonly runtime: JobRuntime,
    private readonly settings: SendSettings = { webhookRetry: DEFAULT_WEBHOOK_RETRY },
    usage?: UsageService,
    log: (line: object) => void = () => undefined,
    private readonly audit?: AuditLog,
  ) {
    this.store = new SendStore(db);
    this.idempotency = new IdempotencyStore(db);
    this.runner = new SendRunner({
      store: this.store,
      jobs,
      runtime,
      queries,
      results,
      credentials,
      secretBox,
      clock,
      settings,
      usage,
      log,
    });
    this.scheduler = new Scheduler(
      'send',
      {
        due: (now) => this.store.due(now),
        // Another replica's scheduler may have read the same due send: only the one that moves its tick runs it.
        claimTick: (send, now) =>
          send.nextRun === null
            ? Promise.resolve(false)
            : this.store.claimTick(send.id, send.nextRun, now + (send.everyMinutes ?? 0) * 60),
        start: async (send) => (await this.startRun(send, 'schedule'))?.run,
      },
      clock,
      runtime.failed,
    );
  }

  private now(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  async create(principal: Principal, input: SendInput): Promise<{ send: SendView; generatedSecret?: string }> {
    const name = checkName(input.name);
    const sql = checkSql(input.sql);
    const checked = checkDestination(input.destination);
    await this.assertDestinationAllowed(checked.destination, checked.secrets.host);
    const everyMinutes = input.schedule?.every_minutes ?? null;
    // It will run as its creator: what the creator may not read now is refused now, not at every run.
    const reads = (await this.queries.assertMayRead(principal, sql)) ?? undefined;
    const id = newId('snd');
    const now = this.now();
    const send: SendRecord = {
      id,
      organizationId: principal.organizationId,
      name,
      sql,
      reads,
      destination: checked.destination,
      secrets: this.secretBox.seal(id, checked.secrets),
      secretsSet: Object.keys(checked.secrets),
      everyMinutes,
      paused: input.paused === true,
      credentialId: principal.credentialId,
      principalId: principalIdOf(principal),
      nextRun: everyMinutes === null ? null : now + everyMinutes * 60,
      created: now,
      updated: now,
    };
    // Counted with the insert, in one transaction: two requests cannot both take the organization's last place.
    await this.db.transaction(lock.objectLimit(principal.organizationId, 'sends'), async () => {
      const limit = this.settings.maxPerOrganization ?? DEFAULT_OBJECT_LIMITS.sends;
      assertRoomFor('sends', await this.store.count(principal.organizationId), limit);
      await this.store.insert(send);
    });
    await this.audit?.record(
      principal.organizationId,
      principal,
      'send.created',
      { type: 'send', id },
      { name, destination: destinationSummary(checked.destination) },
    );
    return { send: { send, lastRun: null }, generatedSecret: checked.generatedSecret };
  }

  /** A destination the outbound rules refuse is refused when the send is made (and again at every delivery). */
  private async assertDestinationAllowed(destination: Destination, secretHost: string | undefined): Promise<void> {
    const rules = this.settings.destinations;
    if (!rules) return;
    const checked =
      destination.type === 'webhook'
        ? rules.resolve(new URL(destination.url).hostname)
        : secretHost === undefined
          ? Promise.resolve('')
          : rules.resolveDatabase(secretHost, destination.port, destination.database);
    await checked.catch((error: unknown) => {
      if (error instanceof LakeServiceError)
        throw new LakeServiceError(error.code, error.message, { param: 'destination' });
    });
  }

  /**
   * A send the caller may see, with its latest run: a restricted credential sees none whose SQL names a table it
   * may not read (404, as for one that does not exist).
   */
  async get(principal: Principal, id: string): Promise<SendView> {
    return this.view(await this.findVisible(principal, id));
  }

  private async find(principal: Principal, id: string): Promise<SendRecord> {
    const send = await this.store.get(principal.organizationId, id);
    if (!send)
      throw new LakeServiceError('send_not_found', `There is no send ${id.slice(0, 64)} in your organization.`);
    return send;
  }

  private async findVisible(principal: Principal, id: string): Promise<SendRecord> {
    const send = await this.find(principal, id);
    if (!(await this.queries.mayRead(principal, send.sql, send.reads)))
      throw new LakeServiceError('send_not_found', `There is no send ${id.slice(0, 64)} in your organization.`);
    return send;
  }

  private async view(send: SendRecord): Promise<SendView> {
    const last = (await this.store.runs(send.id, 1)).data[0];
    return { send, lastRun: last ? await this.runView(last) : null };
  }

  private async runView(run: SendRunRecord): Promise<SendRunView> {
    return { run, job: await this.jobs.getById(run.id) };
  }

  async list(
    principal: Principal,
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: SendView[]; hasMore: boolean }> {
    const after =
      startingAfter === undefined ? undefined : await this.store.get(principal.organizationId, startingAfter);
    if (startingAfter !== undefined && !after)
      throw new LakeServiceError(
        'invalid_cursor',
        'starting_after is not a next_cursor from a previous page of your sends.',
        { param: 'starting_after' },
      );
    const page = await this.store.list(principal.organizationId, limit, after);
    const shown = await this.queries.mayReadEach(principal, page.data);
    const data = await Promise.all(page.data.filter((_, i) => shown[i]).map((send) => this.view(send)));
    return { data, hasMore: page.hasMore };
  }

  /**
   * Changes name, SQL, schedule or `paused`. The destination is fixed: make a new send to deliver elsewhere. Only
   * its creator or an owner may; an owner who changes its SQL becomes the principal it runs as.
   */
  async update(principal: Principal, id: string, change: SendChange): Promise<SendView> {
    const send = await this.find(principal, id);
    await assertCreatorOrOwner(this.directory, principal, send.principalId, `send ${send.id}`);
    if (change.destination !== undefined)
      throw invalid('destination', 'The destination of a send cannot change; create a new send instead.');
    const next = { ...send, updated: this.now() };
    if (change.name !== undefined) next.name = checkName(change.name);
    if (change.sql !== undefined) {
      next.sql = checkSql(change.sql);
      next.reads = (await this.queries.assertMayRead(principal, next.sql)) ?? undefined;
      next.credentialId = principal.credentialId;
      next.principalId = principalIdOf(principal);
    }
    if (change.schedule !== undefined) {
      next.everyMinutes = change.schedule?.every_minutes ?? null;
      next.nextRun = next.everyMinutes === null ? null : this.now() + next.everyMinutes * 60;
    }
    if (change.paused !== undefined) {
      next.paused = change.paused;
      // Resuming starts the schedule afresh rather than firing at once for every interval missed while paused.
      if (send.paused && !change.paused && next.everyMinutes !== null)
        next.nextRun = this.now() + next.everyMinutes * 60;
    }
    await this.store.update(next);
    await this.audit?.record(
      principal.organizationId,
      principal,
      'send.updated',
      { type: 'send', id },
      { changed: Object.keys(change).sort() },
    );
    return this.view(next);
  }

  /** Deletes the send and its runs' records; refused while a run is live, so no delivery is left half-owned. */
  async delete(principal: Principal, id: string): Promise<void> {
    const send = await this.find(principal, id);
    await assertCreatorOrOwner(this.directory, principal, send.principalId, `send ${send.id}`);
    await this.db.transaction(lock.sendRuns(send.id), async () => {
      const live = await this.store.liveRun(send.id);
      if (live)
        throw new LakeServiceError(
          'send_in_progress',
          `Send ${send.id} has run ${live} in progress. Cancel its job ${live} or let it finish, then delete.`,
        );
      await this.store.delete(send.id);
    });
    await this.audit?.record(principal.organizationId, principal, 'send.deleted', { type: 'send', id: send.id });
  }

  /**
   * Starts a run now (202). A paused send → 409 send_paused; one with a run in progress → 409 send_in_progress. With
   * an Idempotency-Key, the run that key first started is answered again (`replayed`), even after it ended, when
   * `send_in_progress` no longer stops a second delivery: a client whose answer was lost can retry without sending
   * the rows twice.
   */
  async trigger(
    principal: Principal,
    id: string,
    idempotencyKey?: string,
  ): Promise<{ run: SendRunView; replayed: boolean }> {
    const send = await this.find(principal, id);
    await assertCreatorOrOwner(this.directory, principal, send.principalId, `send ${send.id}`);
    const keyed =
      idempotencyKey === undefined
        ? undefined
        : {
            key: idempotencyKey,
            scope: {
              organizationId: principal.organizationId,
              principalId: principalIdOf(principal),
              operation: `sends.run:${send.id}`,
            },
          };
    const started = await this.startRun(send, 'manual', principal, keyed);
    if (!started)
      throw new LakeServiceError(
        'send_in_progress',
        `Send ${send.id} already has a run in progress; no second run was started.`,
      );
    return { run: await this.runView(started.run), replayed: started.replayed };
  }

  async runs(
    principal: Principal,
    id: string,
    limit: number,
    startingAfter: string | undefined,
  ): Promise<{ data: SendRunView[]; hasMore: boolean }> {
    const send = await this.findVisible(principal, id);
    const after = startingAfter === undefined ? undefined : await this.store.getRun(startingAfter);
    if (startingAfter !== undefined && after?.sendId !== send.id)
      throw new LakeServiceError(
        'invalid_cursor',
        'starting_after is not a next_cursor from a previous page of these runs.',
        { param: 'starting_after' },
      );
    await this.expireDeadRun(send.id);
    const page = await this.store.runs(send.id, limit, after);
    return { data: await Promise.all(page.data.map((run) => this.runView(run))), hasMore: page.hasMore };
  }

  async getRun(principal: Principal, sendId: string, runId: string): Promise<SendRunView> {
    const send = await this.findVisible(principal, sendId);
    const run = await this.store.getRun(runId);
    if (!run || run.sendId !== send.id)
      throw new LakeServiceError('send_run_not_found', `Send ${send.id} has no run ${runId.slice(0, 64)}.`);
    await this.jobs.expireLeases(run.id);
    return this.runView(run);
  }

  /** Settles when the run, if this process runs it, has ended. */
  async settled(runId: string): Promise<void> {
    await this.runtime.settled(runId);
  }

  /** For lake serve: runs sends whose schedule is due, checking every second. */
  startScheduling(): void {
    this.scheduler.start(1000);
  }

  /** Starts every due, unpaused send that has no run in progress, and moves its next run on by its interval. */
  async runDue(): Promise<string[]> {
    return (await this.scheduler.runDue()).map((run) => run.id);
  }

  /** Stops the schedule; runs in progress get graceMs, then are cancelled. */
  async close(graceMs: number): Promise<void> {
    this.scheduler.stop();
    await this.runtime.drain('send', graceMs);
  }

  /** A run whose process died holds its send (and shows as running) until its expired lease is noticed: notice it. */
  private async expireDeadRun(sendId: string): Promise<void> {
    const live = await this.store.liveRun(sendId);
    if (live) await this.jobs.expireLeases(live);
  }

  /** Records the run and its job (running here, under a lease) and starts it; undefined when one is already live. */
  private async startRun(
    send: SendRecord,
    trigger: 'manual' | 'schedule',
    by?: Principal,
    keyed?: { key: string; scope: IdempotencyScope },
  ): Promise<{ run: SendRunRecord; replayed: boolean } | undefined> {
    await this.expireDeadRun(send.id);
    const locks = [
      lock.sendRuns(send.id),
      ...(keyed ? [lock.idempotencyKey(keyed.scope.organizationId, keyed.scope.principalId, keyed.key)] : []),
    ];
    const requestHash = hashRequest(send.id);
    const started = await this.db.transaction(locks, async () => {
      const replay = keyed ? await this.idempotency.replay(keyed.scope, keyed.key, requestHash) : undefined;
      const earlier = replay && (await this.store.getRun(replay.resourceId));
      if (earlier) return { run: earlier, replayed: true };
      if (trigger === 'manual' && send.paused)
        throw new LakeServiceError('send_paused', `Send ${send.id} is paused; resume it to run it.`);
      if (await this.store.liveRun(send.id)) return undefined;
      const id = newId('snr');
      await this.jobs.create({
        id,
        organizationId: send.organizationId,
        kind: 'send',
        principalId: by ? principalIdOf(by) : send.principalId,
        credentialId: by?.credentialId ?? send.credentialId,
        lease: this.runtime.lease(),
      });
      const record: SendRunRecord = {
        id,
        sendId: send.id,
        trigger,
        queryId: null,
        rowsSent: 0,
        batches: 0,
        created: this.now(),
      };
      await this.store.insertRun(record);
      if (keyed) await this.idempotency.save(keyed.scope, keyed.key, { requestHash, resourceId: id, response: { id } });
      return { run: record, replayed: false };
    });
    if (started && !started.replayed) this.runner.execute(started.run.id, send);
    return started;
  }
}
