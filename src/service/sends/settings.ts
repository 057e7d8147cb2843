import { DEFAULT_WEBHOOK_RETRY } from './deliveries/webhook-delivery.js';
import type { OutboundPolicy } from '../net/outbound.js';
import type { WebhookRetryPolicy } from './deliveries/webhook-delivery.js';

export interface SendSettings {
  webhookRetry: WebhookRetryPolicy;
  /** Where sends may deliver (webhook hosts, destination databases); unrestricted when absent. */
  destinations?: OutboundPolicy;
  /** How many sends an organization keeps (LAKE_ORG_MAX_SENDS); the default when absent. */
  maxPerOrganization?: number;
}

/** Webhook retries from LAKE_WEBHOOK_ATTEMPTS and LAKE_WEBHOOK_RETRY_BASE_MS; the defaults otherwise. */
export function sendSettingsFromEnv(env: Record<string, string | undefined>): SendSettings {
  const read = (name: string, fallback: number, min: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min)
      throw new Error(`${name} must be a whole number of at least ${min}, not '${raw}'.`);
    return value;
  };
  return {
    webhookRetry: {
      ...DEFAULT_WEBHOOK_RETRY,
      attempts: read('LAKE_WEBHOOK_ATTEMPTS', DEFAULT_WEBHOOK_RETRY.attempts, 1),
      baseDelayMs: read('LAKE_WEBHOOK_RETRY_BASE_MS', DEFAULT_WEBHOOK_RETRY.baseDelayMs, 0),
    },
  };
}
