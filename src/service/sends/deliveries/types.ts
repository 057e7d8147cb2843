import type { JsonValue } from '../../engine/json-values.js';
import type { ResultColumn } from '../../queries/store.js';

export type DeliveryRow = Record<string, JsonValue>;

/**
 * One run's delivery to a destination: opened with the result's columns, fed rows in batches, then committed. A
 * delivery that fails throws SendFailure with a message safe to show (no hosts, users or URLs' secrets).
 */
export interface Delivery {
  open(columns: readonly ResultColumn[]): Promise<void>;
  deliver(rows: readonly DeliveryRow[], batch: number): Promise<void>;
  commit(): Promise<void>;
  /** Releases what is open and undoes what can be undone; safe after any failure. */
  abort(): Promise<void>;
}

/** Why a send run failed, with the job error code to record; the message is safe to show. */
export class SendFailure extends Error {
  constructor(
    message: string,
    readonly code: string = 'delivery_failed',
    /** What the run's message leaves out for the tenant (a receiver's status), for the server's log. */
    readonly operatorDetail?: string,
  ) {
    super(message);
  }
}
