import { createHmac } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { postOnce } from '../../net/http-post.js';
import type { OutboundPolicy } from '../../net/outbound.js';
import type { WebhookDestination } from './destination.js';
import { SendFailure, type Delivery, type DeliveryRow } from './types.js';

export interface WebhookRetryPolicy {
  /** Attempts per batch in all, the first included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  timeoutMs: number;
}

/** Five attempts per batch, waiting 1, 2, 4 and 8 s between them (or the receiver's Retry-After, up to a minute). */
export const DEFAULT_WEBHOOK_RETRY: WebhookRetryPolicy = {
  attempts: 5,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  timeoutMs: 30_000,
};

export const SIGNATURE_HEADER = 'Lake-Signature';

/**
 * The signature header value: `t=<epoch seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the send's secret>`.
 * The timestamp is signed too, so a receiver can refuse old replays.
 */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * A Retry-After header in milliseconds from now: seconds, or an HTTP date; undefined when absent or unreadable,
 * so the backoff applies (an absent header once read as 0 s, and every retry came at once).
 */
export function retryAfter(header: string | string[] | undefined, nowMs: number): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/** Statuses worth another attempt: the receiver is overloaded, restarting, or timed out. */
const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504]);

/**
 * Delivers batches as HTTP POSTs: JSON (`{"send","run","batch","rows":[…]}`) or NDJSON (one row per line). Each
 * batch is signed, carries a delivery id that stays the same across its retries (for receivers to deduplicate), and
 * is retried with exponential backoff on network failures, timeouts, 408, 425, 429 and 5xx. Other statuses fail the
 * run at once: retrying a 400 or 401 cannot succeed.
 */
export class WebhookDelivery implements Delivery {
  constructor(
    private readonly destination: WebhookDestination,
    private readonly secret: string,
    private readonly ids: { send: string; run: string },
    private readonly clock: Clock,
    private readonly policy: WebhookRetryPolicy,
    private readonly signal: AbortSignal,
    /** Where webhooks may be posted; unrestricted when absent. */
    private readonly outbound?: OutboundPolicy,
  ) {}

  async open(): Promise<void> {}

  async deliver(rows: readonly DeliveryRow[], batch: number): Promise<void> {
    const ndjson = this.destination.format === 'ndjson';
    const body = ndjson
      ? rows.map((r) => `${JSON.stringify(r)}\n`).join('')
      : JSON.stringify({ send: this.ids.send, run: this.ids.run, batch, rows });
    const delivery = `${this.ids.run}-${batch}`;
    let last = '';
    let made = 0;
    for (let attempt = 1; attempt <= this.policy.attempts; attempt++) {
      if (this.signal.aborted) throw new SendFailure('The run was cancelled.');
      made = attempt;
      const timestamp = Math.floor(this.clock.now() / 1000);
      let retryAfterMs: number | undefined;
      try {
        const response = await postOnce(
          this.destination.url,
          {
            'Content-Type': ndjson ? 'application/x-ndjson' : 'application/json',
            'User-Agent': 'lake-sends',
            [SIGNATURE_HEADER]: signWebhook(this.secret, timestamp, body),
            'Lake-Send-Id': this.ids.send,
            'Lake-Delivery-Id': delivery,
            'Lake-Batch': String(batch),
          },
          body,
          AbortSignal.any([this.signal, AbortSignal.timeout(this.policy.timeoutMs)]),
          this.outbound,
        );
        if (response.status >= 200 && response.status < 300) return;
        last = `HTTP ${response.status}`;
        if (!RETRYABLE.has(response.status)) break;
        retryAfterMs = retryAfter(response.headers['retry-after'], this.clock.now());
      } catch (error) {
        if (this.signal.aborted) throw new SendFailure('The run was cancelled.');
        // The outbound rules refused the receiver: no retry can succeed.
        if ((error as { code?: string }).code === 'host_not_allowed')
          throw new SendFailure("The webhook host is refused by this server's outbound rules.", 'host_not_allowed');
        // Network errors name the host; only their kind is kept.
        last = (error as Error).name === 'TimeoutError' ? 'no answer in time' : 'the receiver could not be reached';
      }
      if (attempt < this.policy.attempts) {
        const backoff = Math.min(this.policy.maxDelayMs, this.policy.baseDelayMs * 2 ** (attempt - 1));
        await this.clock.sleep(Math.min(this.policy.maxDelayMs, retryAfterMs ?? backoff), this.signal);
      }
    }
    // One message for every way a receiver fails (an error status, no answer, nothing listening): a run's error
    // must not tell a tenant what answers at an address. The server's log has the detail.
    throw new SendFailure(
      `The webhook did not accept batch ${batch}: no 2xx answer after ${made} attempt${made === 1 ? '' : 's'} (the receiver answered with an error, did not answer in time, or could not be reached).`,
      'delivery_failed',
      last,
    );
  }

  async commit(): Promise<void> {}

  async abort(): Promise<void> {}
}
