import type { Principal } from '../auth/principal.js';
import { principalOf, type CredentialStore } from '../auth/credentials.js';
import type { Clock } from '../core/clock.js';
import { LakeServiceError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';
import { inBackground } from '../core/repeat.js';
import type { JobRuntime } from '../jobs/job-runtime.js';
import type { JobStore } from '../jobs/job-store.js';
import type { QueryResults } from '../queries/query-results.js';
import type { QueryService } from '../queries/query-service.js';
import type { SecretBox } from '../sources/secret-box.js';
import type { UsageService } from '../usage/usage-service.js';
import { PostgresDelivery } from './deliveries/postgres-delivery.js';
import { SendFailure, type Delivery } from './deliveries/types.js';
import { WebhookDelivery } from './deliveries/webhook-delivery.js';
import type { SendRecord, SendStore } from './send-store.js';
import type { SendSettings } from './settings.js';

/** Rows read from the result and handed to the destination at a time (a webhook batch is its own size). */
const READ_BATCH = 1000;
/** How long a run waits for its query; a send's SQL is meant to be a bounded extract, not an open-ended job. */
const QUERY_WAIT_MS = 15 * 60_000;
/** Failures of this server rather than of the send: logged for its operator. */
const SERVER_FAULTS: ReadonlySet<string> = new Set(['service_unavailable', 'internal_error']);

/** What a send run needs. */
export interface SendRunnerParts {
  store: SendStore;
  jobs: JobStore;
  runtime: JobRuntime;
  queries: QueryService;
  results: QueryResults;
  credentials: CredentialStore;
  secretBox: SecretBox;
  clock: Clock;
  settings: SendSettings;
  usage?: UsageService | undefined;
  log: (line: object) => void;
}

/**
 * The send job kind: one run of a send, as a job of the runtime. Its SQL runs as a query of the credential that
 * created the send, and the result is delivered to the destination batch by batch; a database destination commits
 * once, at the end, so a cancelled or failed run leaves it as it was.
 */
export class SendRunner {
  private readonly store: SendStore;
  private readonly jobs: JobStore;
  private readonly runtime: JobRuntime;
  private readonly queries: QueryService;
  private readonly results: QueryResults;
  private readonly credentials: CredentialStore;
  private readonly secretBox: SecretBox;
  private readonly clock: Clock;
  private readonly settings: SendSettings;
  private readonly usage: UsageService | undefined;
  private readonly log: (line: object) => void;

  constructor(parts: SendRunnerParts) {
    ({
      store: this.store,
      jobs: this.jobs,
      runtime: this.runtime,
      queries: this.queries,
      results: this.results,
      credentials: this.credentials,
      secretBox: this.secretBox,
      clock: this.clock,
      settings: this.settings,
      usage: this.usage,
      log: this.log,
    } = parts);
  }

  private now(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  /** Runs the delivery under the runtime (lease, cancel from any replica, drain) and records how it ended. */
  execute(runId: string, send: SendRecord): void {
    void this.runtime.run(runId, 'send', send.organizationId, async (signal) => {
      try {
        await this.deliver(runId, send, signal);
      } catch (error) {
        if (!signal.aborted) return this.recordFailure(runId, send, error);
      }
      if (signal.aborted)
        await this.jobs.finish(runId, 'cancelled', {
          code: 'cancelled',
          message: 'The run was cancelled; nothing was committed to a database destination.',
        });
      else await this.jobs.finish(runId, 'succeeded');
    });
  }

  private async recordFailure(runId: string, send: SendRecord, error: unknown): Promise<void> {
    // Service errors (a refused SQL, a revoked credential) keep their code; anything unforeseen says no more.
    const known = error instanceof SendFailure || error instanceof LakeServiceError;
    const code = known ? error.code : 'send_failed';
    // What the destination or the send's own SQL and credential did is the user's to read in the run; the
    // rest (a bug, a replica without the right secrets key) is for whoever runs this server to fix.
    if (!known || SERVER_FAULTS.has(code)) this.logFailure(send, runId, code, error);
    else if (error instanceof SendFailure && error.operatorDetail)
      this.log({
        level: 'info',
        msg: 'send delivery failed',
        organization: send.organizationId,
        send: send.id,
        run: runId,
        // The run is a job: background work's lines carry the job id under one name.
        job: runId,
        code,
        detail: error.operatorDetail,
      });
    await this.jobs.finish(runId, 'failed', {
      code,
      message: known ? (error as Error).message : 'The send failed unexpectedly; see the server log.',
    });
  }

  private logFailure(send: SendRecord, runId: string, code: string, error: unknown): void {
    const detail =
      error instanceof LakeServiceError
        ? error.message
        : error instanceof Error
          ? (error.stack ?? `${error.name}: ${error.message}`)
          : String(error);
    this.log({
      level: 'error',
      msg: 'send run failed',
      organization: send.organizationId,
      send: send.id,
      run: runId,
      job: runId,
      code,
      error: redactSecrets(detail),
    });
  }

  /** The principal the send's SQL runs as: its creating credential, which must still be live. */
  private async runAs(send: SendRecord): Promise<Principal> {
    const standing = await this.credentials.standing(send.credentialId);
    const credential = standing?.record;
    const now = this.now();
    if (!credential || credential.revoked !== null || (credential.expires !== null && credential.expires <= now)) {
      throw new LakeServiceError(
        'credentials_revoked',
        'The credential that created this send was revoked or has expired; create the send again with a live one.',
      );
    }
    if (standing.deactivated === 'organization')
      throw new LakeServiceError('organization_deactivated', 'The organization of this send is deactivated.');
    if (standing.deactivated === 'user')
      throw new LakeServiceError(
        'user_deactivated',
        'The person this send runs as was deactivated; an owner may change its SQL to run it as themselves.',
      );
    return principalOf(credential);
  }

  private async deliver(runId: string, send: SendRecord, signal: AbortSignal): Promise<void> {
    const principal = await this.runAs(send);
    const submitted = await this.queries.submit(principal, { sql: send.sql }, undefined);
    const queryId = submitted.query.id;
    await this.store.recordQuery(runId, queryId);
    // A cancelled run stops its query wherever it runs: here, or (claimed by another replica) through its job's
    // cancel, which reaches that replica at once; the run itself does not wait for the query to end.
    // (A cancel that came while the query was being submitted has already fired: it is acted on now.)
    const cancelled = new Promise<void>((resolve) =>
      signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    const onAbort = (): void =>
      inBackground(async () => {
        if (!(await this.queries.stop(queryId, 'cancelled'))) await this.jobs.requestCancel(queryId);
      });
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    try {
      await Promise.race([this.queries.waitFor(queryId, QUERY_WAIT_MS), cancelled]);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    if (signal.aborted) return;
    const query = await this.queries.get(principal, queryId);
    const unfinished = query.status === 'running' || query.status === 'queued';
    // A query that outlived the run's patience is stopped, not left to hold a worker for nobody.
    if (unfinished) await this.queries.stop(queryId, 'cancelled');
    if (query.status !== 'succeeded') {
      throw new SendFailure(
        `The send's query ${queryId} ${unfinished ? 'did not finish in 15 minutes' : `failed: ${query.errorMessage ?? query.status}`}.`,
        'query_failed',
      );
    }
    if (!this.results.file(query) || !query.columns)
      throw new SendFailure(`The send's query ${queryId} has no result to deliver.`);
    const secrets = this.secretBox.open(send.id, send.secrets);
    const delivery: Delivery =
      send.destination.type === 'postgres'
        ? new PostgresDelivery(send.destination, secrets, this.settings.destinations, signal)
        : new WebhookDelivery(
            send.destination,
            secrets.secret ?? '',
            { send: send.id, run: runId },
            this.clock,
            this.settings.webhookRetry,
            signal,
            this.settings.destinations,
          );
    const batchSize = send.destination.type === 'webhook' ? send.destination.batch_size : READ_BATCH;
    try {
      await delivery.open(query.columns);
      let offset = 0;
      for (let batch = 1; ; batch++) {
        if (signal.aborted) throw new SendFailure('The run was cancelled.');
        const page = await this.results.page(query, offset, batchSize);
        // An empty result still opens (and, in replace mode, empties) a table, but posts no empty webhook batch.
        if (page.rows.length === 0) break;
        await delivery.deliver(page.rows, batch);
        offset += page.rows.length;
        // A webhook's rows count as sent per accepted batch; a database's only at the commit below.
        if (send.destination.type === 'webhook')
          await this.countDelivered(runId, send.organizationId, page.rows.length);
        if (page.rows.length < batchSize) break;
      }
      if (signal.aborted) throw new SendFailure('The run was cancelled.');
      await delivery.commit();
      if (send.destination.type === 'postgres') await this.countDelivered(runId, send.organizationId, offset);
    } catch (error) {
      await delivery.abort();
      throw error;
    }
  }

  private async countDelivered(runId: string, organizationId: string, rows: number): Promise<void> {
    await this.store.addDelivered(runId, rows);
    await this.usage?.record(organizationId, 'rows_sent', rows);
  }
}
