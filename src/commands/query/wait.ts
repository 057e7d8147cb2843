import { QUERY_ROUTES } from '../../contract/routes.js';
import type { QueryObject } from '../../contract/types.js';
import type { CallInput, LakeClient } from '../../client/lake-client.js';

/** A query as GET /queries/{id} answers it, with a page of rows once it succeeded (format=inline). */
export type QueryPage = QueryObject;

/** The query as the last poll answered it, and that poll's request id (what a failed query's error quotes). */
export interface WaitedQuery {
  page: QueryPage;
  requestId: string | undefined;
}

export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** Polling where a server does not hold requests: 1 s at first, backing off to 2 s for long queries, as the spec recommends. */
export function pollDelayMs(attempt: number): number {
  return Math.min(2000, 1000 + attempt * 250);
}

export interface WaitOptions {
  mode: 'local' | 'remote';
  /** Give up (and return the running query) after this many milliseconds; undefined waits for ever. */
  timeoutMs?: number;
  /** Extra query parameters for every poll, so the final one already carries the first page. */
  query?: CallInput<typeof QUERY_ROUTES.getQuery>['query'];
  /** Stops waiting (returning the latest state) when aborted. */
  signal?: AbortSignal;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Told the status after every poll that has not finished (queued, running), for a live display. */
  onStatus?: (status: QueryPage['status']) => void;
}

const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/** The longest a remote poll is held open: below the 30 s the service allows and the idle limits of most proxies. */
const REMOTE_WAIT_SECONDS = 20;

/**
 * Waits for a query to finish or the time to run out. Local or remote, each request asks the service to hold it
 * until the query finishes (`wait`), so an answer comes the moment it is ready, with no sleeping in between (a
 * remote `lake query` slept 1–2 s between polls, and took ≥ 1.2 s for anything). A server that answers a `wait`
 * at once with the query still running (one without long polling) is polled every 1–2 s instead.
 */
export async function waitForQuery(client: LakeClient, id: string, options: WaitOptions): Promise<WaitedQuery> {
  const sleep = options.sleep ?? defaultSleep;
  const deadline = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
  const longest = options.mode === 'local' ? 30 : REMOTE_WAIT_SECONDS;
  for (let attempt = 0; ; attempt++) {
    const remaining = deadline - Date.now();
    const wait = Math.max(0, Math.min(longest, Math.floor(remaining / 1000)));
    const asked = Date.now();
    const response = await client.call(QUERY_ROUTES.getQuery, {
      params: { id },
      query: { ...options.query, ...(wait > 0 ? { wait } : {}) },
    });
    const page = response.body;
    const requestId = response.headers.get('Request-Id') ?? undefined;
    if (TERMINAL.has(page.status) || options.signal?.aborted) return { page, requestId };
    options.onStatus?.(page.status);
    const left = deadline - Date.now();
    if (left <= 0) return { page, requestId };
    const heldOpen = Date.now() - asked >= (wait * 1000) / 2;
    if (wait === 0) await sleep(Math.min(50, left), options.signal);
    else if (!heldOpen)
      await sleep(Math.min(options.mode === 'remote' ? pollDelayMs(attempt) : 50, left), options.signal);
  }
}
