import type { QueryJob, QueryOutcome, StopReason } from './query-engine.js';
import type { TableReference } from './table-refs.js';

/**
 * The messages between `lake serve` and a query worker, over the IPC channel of a forked process, as JSON.
 * docs/decisions.md ("Query workers") describes the protocol; keep both in step.
 *
 * A worker runs at most one query at a time. The server sends `run` and may send `stop`; the worker answers with
 * `executing`, then exactly one `outcome`. `inspect` (parse-only checks) goes to a worker
 * of its own and is answered by `inspected`. A worker says `ready` once, when it can take work.
 */
export type ToWorker =
  | { type: 'run'; job: QueryJob }
  | { type: 'stop'; queryId: string; reason: StopReason | 'query_timeout' | 'result_limit' }
  | { type: 'inspect'; requestId: number; statement: string };

export type FromWorker =
  | { type: 'ready'; rssBytes: number }
  | { type: 'executing'; queryId: string }
  | { type: 'outcome'; queryId: string; outcome: QueryOutcome; rssBytes: number }
  | {
      type: 'inspected';
      requestId: number;
      references?: TableReference[];
      refusal?: { code: string; message: string; param?: string };
      error?: string;
      /** An error of lake's own code in the parse, with its stack: the server logs it (isProgrammingError). */
      internalError?: string;
    };
